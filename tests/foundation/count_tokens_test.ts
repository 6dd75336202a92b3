import assert from "node:assert/strict";
import { countTokens } from "../../src/protocol/count_tokens.ts";

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
