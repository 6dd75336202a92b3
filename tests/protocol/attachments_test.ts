/**
 * Images and documents on both protocols: what reaches the council as attachments, the size
 * and count limits (a 4xx in the protocol's own envelope), and URL sources fetched only when
 * `fetchUrls` allows.
 */
import assert from "node:assert/strict";
import type { TranscriptEntry, TurnRequest } from "../../src/council/types.ts";
import { MessagesRequestSchema, messagesTurnInput } from "../../src/protocol/messages/request.ts";
import {
  ResponsesRequestSchema,
  responsesTurnInput,
} from "../../src/protocol/responses/request.ts";
import {
  type AttachmentPolicy,
  DEFAULT_ATTACHMENT_POLICY,
} from "../../src/protocol/attachment_policy.ts";
import { answer, deps, done, fixedTurn, post, serve } from "../support/scripted_turns.ts";
import { pdfBase64, PNG_4X3, pngOfSize, sha256 } from "../fixtures/images.ts";

const png = (data = PNG_4X3) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data },
});
const messagesBody = (content: unknown[]) => ({
  model: "claude-opus-5-5",
  max_tokens: 100,
  messages: [{ role: "user", content }],
});
const responsesBody = (content: unknown[]) => ({
  model: "gpt-5.5",
  input: [{ type: "message", role: "user", content }],
});

const userEntry = (transcript: TranscriptEntry[]) =>
  transcript.find((e) => e.kind === "user") as Extract<TranscriptEntry, { kind: "user" }>;

Deno.test("attachments: Messages image and document sources (base64, url, text, content)", () => {
  const body = MessagesRequestSchema.parse(messagesBody([
    png(),
    { type: "image", source: { type: "url", url: "https://example.com/shot.webp" } },
    { type: "image", source: { type: "file", file_id: "file_1" } },
    { type: "document", title: "a.pdf", source: { type: "url", url: "https://example.com/a" } },
    {
      type: "document",
      title: "notes",
      source: { type: "text", media_type: "text/plain", data: "n1" },
    },
    {
      type: "document",
      source: { type: "content", content: [{ type: "text", text: "c1" }, png()] },
    },
    { type: "text", text: "compare them" },
  ]));
  const user = userEntry(messagesTurnInput(body).transcript);
  assert.equal(
    user.text,
    "[image: not readable by the gateway]\n[document: notes]\nn1\nc1\ncompare them",
  );
  assert.deepEqual(user.attachments, [
    { kind: "image", mediaType: "image/png", source: { type: "base64", data: PNG_4X3 } },
    {
      kind: "image",
      mediaType: "image/webp",
      source: { type: "url", url: "https://example.com/shot.webp" },
    },
    {
      kind: "document",
      mediaType: "application/pdf",
      source: { type: "url", url: "https://example.com/a" },
      name: "a.pdf",
    },
    { kind: "image", mediaType: "image/png", source: { type: "base64", data: PNG_4X3 } },
  ]);
});

Deno.test("attachments: Messages refuses bad base64, unknown image types and non-http URLs", () => {
  const cases: [unknown, RegExp][] = [
    [png("not base64!"), /messages\.0\.content\.0\.source\.data/],
    [
      { type: "image", source: { type: "base64", media_type: "image/bmp", data: "AAAA" } },
      /image\/png, image\/jpeg/,
    ],
    [{ type: "image", source: { type: "url", url: "file:///etc/passwd" } }, /http\(s\) URL/],
    [{ type: "image" }, /source/],
  ];
  for (const [block, message] of cases) {
    const parsed = MessagesRequestSchema.safeParse(messagesBody([block]));
    assert.equal(parsed.success, false, JSON.stringify(block));
    const issue = parsed.error!.issues[0];
    assert.match(`${issue.path.join(".")}: ${issue.message}`, message);
  }
});

Deno.test("attachments: Responses input_image (data URL, URL) and input_file (PDF, text, other)", () => {
  const pdf = pdfBase64();
  const body = ResponsesRequestSchema.parse(responsesBody([
    { type: "input_text", text: "look" },
    { type: "input_image", image_url: `data:image/png;base64,${PNG_4X3}`, detail: "high" },
    { type: "input_image", image_url: "https://example.com/x.jpg" },
    { type: "input_image", file_id: "file_9" },
    { type: "input_file", filename: "spec.pdf", file_data: `data:application/pdf;base64,${pdf}` },
    { type: "input_file", filename: "raw.pdf", file_data: pdf },
    { type: "input_file", filename: "notes.txt", file_data: btoa("plain notes") },
    { type: "input_file", filename: "sheet.xlsx", file_data: btoa("PK\u0003\u0004") },
  ]));
  const user = userEntry(responsesTurnInput(body).transcript);
  assert.equal(
    user.text,
    "look\n[image: not readable by the gateway]\n[document: notes.txt]\nplain notes\n" +
      "[document: sheet.xlsx] (unknown type: not readable)",
  );
  assert.deepEqual(user.attachments, [
    { kind: "image", mediaType: "image/png", source: { type: "base64", data: PNG_4X3 } },
    {
      kind: "image",
      mediaType: "image/jpeg",
      source: { type: "url", url: "https://example.com/x.jpg" },
    },
    {
      kind: "document",
      mediaType: "application/pdf",
      source: { type: "base64", data: pdf },
      name: "spec.pdf",
    },
    {
      kind: "document",
      mediaType: "application/pdf",
      source: { type: "base64", data: pdf },
      name: "raw.pdf",
    },
  ]);
});

Deno.test("attachments: Responses images inside a function_call_output are attachments", () => {
  const body = ResponsesRequestSchema.parse({
    model: "gpt-5.5",
    input: [
      { type: "message", role: "user", content: "what is on screen?" },
      { type: "function_call", call_id: "c1", name: "view_image", arguments: "{}" },
      {
        type: "function_call_output",
        call_id: "c1",
        output: [{ type: "input_image", image_url: `data:image/png;base64,${PNG_4X3}` }],
      },
    ],
  });
  const result = responsesTurnInput(body).transcript.at(-1);
  assert.deepEqual(result, {
    kind: "tool_result",
    id: "c1",
    text: "",
    attachments: [{
      kind: "image",
      mediaType: "image/png",
      source: { type: "base64", data: PNG_4X3 },
    }],
    isError: false,
  });
});

function policy(extra: Partial<AttachmentPolicy> = {}): AttachmentPolicy {
  return { ...DEFAULT_ATTACHMENT_POLICY, ...extra };
}

Deno.test("attachments: an image over maxImageBytes is a 413 in each protocol's envelope", async () => {
  const seen: TurnRequest[] = [];
  await using server = serve(deps(fixedTurn([done(answer("never"))], seen), {
    attachments: policy({ maxImageBytes: 1000 }),
  }));
  const big = pngOfSize(1001);
  const messages = await post(`${server.url}/v1/messages`, messagesBody([png(big)]));
  assert.equal(messages.status, 413);
  const envelope = await messages.json();
  assert.equal(envelope.type, "error");
  assert.equal(envelope.error.type, "request_too_large");
  assert.match(
    envelope.error.message,
    /image #1 \(image\/png\) is 1001 bytes.*1000.*maxImageBytes/,
  );

  const responses = await post(
    `${server.url}/v1/responses`,
    responsesBody([
      { type: "input_image", image_url: `data:image/png;base64,${big}` },
    ]),
  );
  assert.equal(responses.status, 413);
  const error = (await responses.json()).error;
  assert.equal(error.type, "invalid_request_error");
  assert.equal(error.code, "request_too_large");
  assert.match(error.message, /maxImageBytes/);
  assert.equal(seen.length, 0, "no turn ran");

  const fits = await post(`${server.url}/v1/messages`, messagesBody([png(pngOfSize(1000))]));
  assert.equal(fits.status, 200, "exactly the limit is taken");
  await fits.body?.cancel();
});

Deno.test("attachments: the per-request total and count limits refuse with 413 and 400", async () => {
  await using server = serve(deps(fixedTurn([done(answer("never"))]), {
    attachments: policy({ maxAttachmentBytes: 1500, maxAttachments: 3 }),
  }));
  const twoImages = messagesBody([png(pngOfSize(800)), png(pngOfSize(800))]);
  const total = await post(`${server.url}/v1/messages`, twoImages);
  assert.equal(total.status, 413);
  assert.match((await total.json()).error.message, /1600 bytes.*1500.*maxAttachmentBytes/);

  const many = await post(`${server.url}/v1/responses`, {
    model: "gpt-5.5",
    input: [1, 2, 3, 4].map(() => ({
      role: "user",
      content: [{ type: "input_image", image_url: `data:image/png;base64,${PNG_4X3}` }],
    })),
  });
  assert.equal(many.status, 400);
  const error = (await many.json()).error;
  assert.equal(error.type, "invalid_request_error");
  assert.match(error.message, /4 images and documents.*at most 3.*maxAttachments/);
});

/** A server for URL sources: `/shot.png` is an image, `/big.png` too large, `/page` HTML. */
function imageHost(): { url: string; hits: string[] } & AsyncDisposable {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    hits.push(path);
    if (path === "/shot.png") {
      // A generic type: the bytes say what it is.
      return new Response(Uint8Array.from(atob(PNG_4X3), (c) => c.charCodeAt(0)), {
        headers: { "content-type": "application/octet-stream" },
      });
    }
    if (path === "/big.png") return new Response(new Uint8Array(5000));
    if (path === "/page") {
      return new Response("<html></html>", { headers: { "content-type": "text/html" } });
    }
    return new Response("gone", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const urlImage = (url: string) => ({ type: "image", source: { type: "url", url } });

Deno.test("attachments: URL sources are passed on as URLs unless fetchUrls is on", async () => {
  await using host = imageHost();
  const seen: TurnRequest[] = [];
  await using server = serve(deps(fixedTurn([done(answer("ok"))], seen)));
  const response = await post(
    `${server.url}/v1/messages`,
    messagesBody([urlImage(`${host.url}/shot.png`)]),
  );
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.deepEqual(userEntry(seen[0].transcript).attachments, [
    { kind: "image", mediaType: "image/png", source: { type: "url", url: `${host.url}/shot.png` } },
  ]);
  assert.deepEqual(host.hits, [], "nothing was fetched");
});

Deno.test("attachments: with fetchUrls, a URL image arrives as its bytes; failures are 4xx", async () => {
  await using host = imageHost();
  const seen: TurnRequest[] = [];
  await using server = serve(deps(fixedTurn([done(answer("ok"))], seen), {
    attachments: policy({ fetchUrls: true, maxImageBytes: 4000 }),
  }));
  const ok = await post(
    `${server.url}/v1/messages`,
    messagesBody([urlImage(`${host.url}/shot.png`)]),
  );
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  const [attachment] = userEntry(seen[0].transcript).attachments!;
  assert.equal(attachment.mediaType, "image/png");
  assert.equal(attachment.source.type, "base64");
  assert.equal(
    await sha256(attachment.source.type === "base64" ? attachment.source.data : ""),
    await sha256(PNG_4X3),
  );

  const cases: [string, number, RegExp][] = [
    ["/big.png", 413, /image #1: .*larger than 4000 bytes/],
    ["/page", 400, /image #1: .*\/page is not image\/png.*text\/html/],
    ["/missing.png", 400, /image #1: cannot fetch .*HTTP 404/],
  ];
  for (const [path, status, message] of cases) {
    const response = await post(
      `${server.url}/v1/responses`,
      responsesBody([
        { type: "input_image", image_url: `${host.url}${path}` },
      ]),
    );
    assert.equal(response.status, status, path);
    assert.match((await response.json()).error.message, message);
  }
  assert.equal(seen.length, 1, "refused requests ran no turn");
});
