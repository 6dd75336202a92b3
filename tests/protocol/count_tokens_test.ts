import assert from "node:assert/strict";
import { countTokens } from "../../src/protocol/count_tokens.ts";
import {
  imageTokens,
  MAX_IMAGE_TOKENS,
  PAGE_TOKENS,
} from "../../src/protocol/attachment_tokens.ts";
import { pdfBase64, PNG_4X3, pngHeader, pngOfSize } from "../fixtures/images.ts";

Deno.test("count_tokens: ceil(characters / 4) of a plain message", () => {
  assert.equal(countTokens({ messages: [{ role: "user", content: "abcd" }] }), 1);
  assert.equal(countTokens({ messages: [{ role: "user", content: "abcde" }] }), 2);
  assert.equal(countTokens({ messages: [{ role: "user", content: "x".repeat(400) }] }), 100);
  assert.equal(countTokens({ messages: [] }), 0);
});

Deno.test("count_tokens: system, blocks, tool_use input, tool_result content and tools count", () => {
  const system = "S".repeat(10); // 10
  const body = {
    model: "m",
    system: [{ type: "text", text: system }],
    messages: [
      { role: "user", content: [{ type: "text", text: "hello" }] }, // 5
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "not counted", signature: "x" },
          { type: "tool_use", id: "t1", name: "Read", input: { file_path: "/a" } }, // 17
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "line one" }, // 8
          { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "ab" }] }, // 2
        ],
      },
      { role: "system", content: "mid" }, // 3
    ],
    tools: [{ name: "Read", description: "Reads", input_schema: { type: "object" } }], // 4+5+17
  };
  const chars = 10 + 5 + JSON.stringify({ file_path: "/a" }).length + 8 + 2 + 3 + 4 + 5 +
    JSON.stringify({ type: "object" }).length;
  assert.equal(countTokens(body), Math.ceil(chars / 4));
  // A string system prompt counts the same as one text block.
  assert.equal(
    countTokens({ ...body, system }),
    countTokens(body),
  );
});

Deno.test("count_tokens: a body that is not a Messages request gives 0", () => {
  for (const body of [null, 42, "text", [], {}, { messages: "nope" }, { system: "only system" }]) {
    assert.equal(countTokens(body), 0, JSON.stringify(body));
  }
});

Deno.test("count_tokens: odd blocks are skipped, not fatal", () => {
  assert.equal(
    countTokens({ messages: [null, 3, { content: [null, 1, { type: "image" }, "abcd"] }] }),
    1,
  );
});

const image = (data: string, mediaType = "image/png") => ({
  type: "image",
  source: { type: "base64", media_type: mediaType, data },
});

Deno.test("count_tokens: an image counts width × height / 750 from its header, not its base64 length", () => {
  const small = countTokens({
    messages: [{ role: "user", content: [image(pngHeader(300, 200))] }],
  });
  assert.equal(small, 80, "300 × 200 / 750");
  // A large file of a small image counts as the small image.
  const padded = pngOfSize(400_000).replace(/^.{44}/, pngHeader(300, 200).slice(0, 44));
  assert.equal(countTokens({ messages: [{ role: "user", content: [image(padded)] }] }), 80);
  // The long edge is scaled to 1568 px first, and an image counts at most 1600.
  assert.equal(imageTokens(3136, 200), Math.ceil(1568 * 100 / 750));
  assert.equal(imageTokens(4000, 4000), MAX_IMAGE_TOKENS);
});

Deno.test("count_tokens: images of unknown size (URL, unreadable header) count the fixed maximum", () => {
  const url = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };
  assert.equal(countTokens({ messages: [{ role: "user", content: [url] }] }), MAX_IMAGE_TOKENS);
  const unreadable = image(btoa("not an image at all"));
  assert.equal(countTokens({ messages: [{ role: "user", content: [unreadable] }] }), 1600);
});

Deno.test("count_tokens: a PDF counts per page; images inside tool_result count too", () => {
  const doc = (data: string) => ({
    type: "document",
    source: { type: "base64", media_type: "application/pdf", data },
  });
  assert.equal(
    countTokens({ messages: [{ role: "user", content: [doc(pdfBase64(3))] }] }),
    3 * PAGE_TOKENS,
  );
  const result = {
    type: "tool_result",
    tool_use_id: "t1",
    content: [{ type: "text", text: "abcd" }, image(PNG_4X3)],
  };
  assert.equal(countTokens({ messages: [{ role: "user", content: [result] }] }), 1 + 1);
  const text = { type: "document", source: { type: "text", data: "12345678" } };
  assert.equal(countTokens({ messages: [{ role: "user", content: [text] }] }), 2, "text as text");
});
