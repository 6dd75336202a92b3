/** The HTTP runners' pure parts: SSE framing, retry-after reading, fetch error wording. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { listedModelIds } from "../../../src/agents/http/http_api.ts";
import {
  describeFetchError,
  isRetryable,
  retryAfterMs,
} from "../../../src/agents/http/upstream_errors.ts";
import { SseDecoder, type SseEvent } from "../../../src/agents/http/sse_parser.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function decodeAll(chunks: string[]): SseEvent[] {
  const decoder = new SseDecoder();
  return [...chunks.flatMap((c) => decoder.push(bytes(c))), ...decoder.end()];
}

Deno.test("sse: events, names, multi-line data, comments and a missing final blank line", () => {
  assert.deepEqual(
    decodeAll([
      ': comment\nevent: message_start\ndata: {"a":1}\n\n',
      "data: line one\ndata: line two\n\n",
      "event: ping\ndata:no-space\n\nretry: 10\nid: 3\n\n",
      "event: last\ndata: unterminated",
    ]),
    [
      { event: "message_start", data: '{"a":1}' },
      { event: "message", data: "line one\nline two" },
      { event: "ping", data: "no-space" },
      { event: "last", data: "unterminated" },
    ],
  );
});

Deno.test("sse: CRLF, CR and LF line ends, split anywhere, give the same events", () => {
  const text = "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n";
  const expected = [
    { event: "a", data: "1" },
    { event: "b", data: "2" },
    { event: "message", data: "3" },
  ];
  assert.deepEqual(decodeAll([text]), expected);
  for (let cut = 1; cut < text.length; cut++) {
    assert.deepEqual(decodeAll([text.slice(0, cut), text.slice(cut)]), expected, `cut at ${cut}`);
  }
});

Deno.test("sse: a multi-byte character split across chunks survives", () => {
  const all = bytes("data: héllo — ✓\n\n");
  const decoder = new SseDecoder();
  const events = [
    ...decoder.push(all.subarray(0, 9)),
    ...decoder.push(all.subarray(9, 18)),
    ...decoder.push(all.subarray(18)),
  ];
  assert.deepEqual(events, [{ event: "message", data: "héllo — ✓" }]);
});

Deno.test("sse: any chunking of a stream yields the events of the whole (property)", () => {
  const eventArb = fc.record({
    event: fc.constantFrom("message_start", "content_block_delta", "ping"),
    data: fc.string({ unit: "grapheme", maxLength: 30 }).filter((s) => !/[\r\n]/.test(s)),
  });
  fc.assert(fc.property(
    fc.array(eventArb, { maxLength: 8 }),
    fc.array(fc.nat(), { maxLength: 6 }),
    fc.constantFrom("\n", "\r\n", "\r"),
    (events, cuts, eol) => {
      const text = events.map((e) => `event: ${e.event}${eol}data: ${e.data}${eol}${eol}`).join("");
      const all = bytes(text);
      const points = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
      const decoder = new SseDecoder();
      const out: SseEvent[] = [];
      let from = 0;
      for (const point of [...points, all.length]) {
        out.push(...decoder.push(all.subarray(from, point)));
        from = point;
      }
      out.push(...decoder.end());
      // Only the one space after "data:" is the separator: the value comes back whole.
      assert.deepEqual(out, events.map((e) => ({ event: e.event, data: e.data })));
    },
  ));
});

Deno.test("retry-after: seconds, milliseconds, HTTP dates; absent or unreadable is undefined", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfterMs(new Headers({ "retry-after": "3" }), now), 3000);
  assert.equal(retryAfterMs(new Headers({ "retry-after": "0.5" }), now), 500);
  assert.equal(
    retryAfterMs(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now),
    250,
  );
  assert.equal(
    retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" }), now),
    7000,
  );
  assert.equal(
    retryAfterMs(new Headers({ "retry-after": "Wed, 31 Dec 2025 00:00:00 GMT" }), now),
    0,
  );
  assert.equal(retryAfterMs(new Headers(), now), undefined);
  assert.equal(retryAfterMs(new Headers({ "retry-after": "soon" }), now), undefined);
});

Deno.test("retryable statuses: 429 and 5xx only", () => {
  assert.deepEqual(
    [400, 401, 403, 404, 408, 429, 500, 502, 503, 529].filter(isRetryable),
    [429, 500, 502, 503, 529],
  );
});

Deno.test("fetch errors are named in a few words", () => {
  assert.equal(
    describeFetchError(new TypeError("error sending request: Connection refused (os error 111)")),
    "connection refused",
  );
  assert.equal(
    describeFetchError(
      new TypeError("error sending request", {
        cause: new Error("dns error: failed to lookup address information"),
      }),
    ),
    "host not found",
  );
  assert.equal(describeFetchError(new Error("something odd")), "something odd");
});

Deno.test("models lists: ids of {data:[{id}]}, anything else is empty", () => {
  assert.deepEqual(listedModelIds({ data: [{ id: "a" }, { id: 2 }, {}, { id: "b" }] }), ["a", "b"]);
  assert.deepEqual(listedModelIds({ models: [] }), []);
  assert.deepEqual(listedModelIds(null), []);
});
