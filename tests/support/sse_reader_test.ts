/**
 * The SSE reader: whole texts, chunks split anywhere (CR LF included), JSON and non-JSON data,
 * and records read one by one from a live Response.
 */
import assert from "node:assert/strict";
import { parseSse, SseDecoder, SseReader } from "./sse_reader.ts";

const TEXT =
  'event: a\ndata: {"n":1}\n\ndata: [DONE]\n\n: a comment only\n\nevent: b\ndata: x\ndata: y\n\n';

Deno.test("sse reader: a whole text gives every record, data parsed when it is JSON", () => {
  const records = parseSse(TEXT);
  assert.deepEqual(records.map((r) => [r.event, r.data]), [
    ["a", { n: 1 }],
    [undefined, "[DONE]"],
    [undefined, undefined],
    ["b", "x\ny"],
  ]);
  assert.equal(records[0].raw, 'event: a\ndata: {"n":1}');
  assert.equal(records[0].text, '{"n":1}');
});

Deno.test("sse reader: chunks split anywhere, CR LF too, give the same records", () => {
  const crlf = TEXT.replaceAll("\n", "\r\n");
  for (let cut = 1; cut < crlf.length; cut++) {
    const decoder = new SseDecoder();
    const records = [
      ...decoder.push(crlf.slice(0, cut)),
      ...decoder.push(crlf.slice(cut)),
      ...decoder.end(),
    ];
    assert.deepEqual(records.map((r) => r.data), parseSse(TEXT).map((r) => r.data), `cut ${cut}`);
  }
});

Deno.test("sse reader: a live body is read record by record; a last unterminated one is kept", async () => {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode("event: one\ndata: 1\n\nevent: tw"));
      controller.enqueue(encoder.encode("o\ndata: 2\n\nevent: three\ndata: 3"));
      controller.close();
    },
  });
  await using reader = new SseReader(new Response(body));
  assert.equal((await reader.until("two")).data, 2);
  const rest = await reader.rest();
  assert.deepEqual(rest.map((r) => r.event), ["one", "two", "three"]);
  assert.equal(await reader.next(), undefined);
});

Deno.test("sse reader: each record once across 7-byte chunks; a half record waits for its end", () => {
  const decoder = new SseDecoder();
  const stream = 'event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {}\r\n\r\n' +
    'event: content_block_delta\ndata: {"t":"x"}\n\n';
  const records = [];
  for (let i = 0; i < stream.length; i += 7) records.push(...decoder.push(stream.slice(i, i + 7)));
  assert.deepEqual(records.map((r) => [r.event, r.text]), [
    ["message_start", '{"a":1}'],
    ["ping", "{}"],
    ["content_block_delta", '{"t":"x"}'],
  ]);
  assert.deepEqual(decoder.push("event: half\ndata: 1\n"), []);
});
