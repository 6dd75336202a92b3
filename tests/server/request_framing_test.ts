/** RequestFraming: where requests begin and end on a connection, strictly. */
import assert from "node:assert/strict";
import { type FramingStep, RequestFraming } from "../../src/server/request_framing.ts";

const ID = { name: "x-council-connection", value: "c-1" };
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder("latin1").decode(bytes);

/** Feeds `chunks` and returns the step kinds, with forwarded bytes joined into one text. */
function run(chunks: (string | Uint8Array)[], framing = new RequestFraming(ID)) {
  const kinds: string[] = [];
  let forwarded = "";
  const rejects: FramingStep[] = [];
  for (const chunk of chunks) {
    for (const step of framing.feed(typeof chunk === "string" ? encode(chunk) : chunk)) {
      if (step.kind === "forward") forwarded += decode(step.bytes);
      else kinds.push(step.kind);
      if (step.kind === "reject") rejects.push(step);
    }
  }
  return { kinds, forwarded, rejects, framing };
}

const bytewise = (text: string) => [...text].map((ch) => ch);

Deno.test("framing: a GET is one request; the connection header is added after the request line", () => {
  const { kinds, forwarded, framing } = run(["GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"]);
  assert.deepEqual(kinds, ["start", "head", "complete"]);
  assert.equal(
    forwarded,
    "GET /v1/models HTTP/1.1\r\nx-council-connection: c-1\r\nHost: x\r\n\r\n",
  );
  assert.equal(framing.midRequest, false);
});

Deno.test("framing: a client's own connection header is dropped, whatever its case", () => {
  const { forwarded } = run([
    "GET / HTTP/1.1\r\nX-Council-Connection: forged\r\nHost: x\r\nx-council-connection: b\r\n\r\n",
  ]);
  assert.equal(forwarded, "GET / HTTP/1.1\r\nx-council-connection: c-1\r\nHost: x\r\n\r\n");
});

Deno.test("framing: a content-length body ends the request; a pipelined request follows", () => {
  const head = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n";
  const { kinds, forwarded } = run([head + "01234", "56789GET / HTTP/1.1\r\n\r\n"]);
  assert.deepEqual(kinds, ["start", "head", "complete", "start", "head", "complete"]);
  assert.ok(forwarded.includes("\r\n\r\n0123456789GET / HTTP/1.1\r\nx-council-connection: c-1"));
});

Deno.test("framing: a head and a body trickled one byte at a time give the same steps", () => {
  const text = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
  const whole = run([text]);
  const trickled = run(bytewise(text));
  assert.deepEqual(trickled.kinds, whole.kinds);
  assert.equal(trickled.forwarded, whole.forwarded);
  const midway = new RequestFraming(ID);
  run(bytewise(text.slice(0, 30)), midway);
  assert.equal(midway.midRequest, true);
});

Deno.test("framing: a chunked body with extensions and trailers passes on byte for byte", () => {
  const body = "4;ext=1\r\nabcd\r\n2\r\nef\r\n0\r\nX-Trailer: t\r\n\r\n";
  const text = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + body;
  for (const chunks of [[text], bytewise(text)]) {
    const { kinds, forwarded } = run(chunks);
    assert.deepEqual(kinds, ["start", "head", "complete"]);
    assert.ok(forwarded.endsWith("\r\n\r\n" + body));
  }
});

Deno.test("framing: empty lines between requests are dropped", () => {
  const { kinds, forwarded } = run(["\r\n\r\nGET / HTTP/1.1\r\n\r\n"]);
  assert.deepEqual(kinds, ["start", "head", "complete"]);
  assert.ok(forwarded.startsWith("GET / HTTP/1.1\r\n"));
});

Deno.test("framing: ambiguous or unsupported framing is refused with its status", () => {
  const cases: [string, number, RegExp][] = [
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, /both/],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, /chunked/],
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400, /conflicting/],
    ["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, /invalid content-length/],
    ["GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, /header line/],
    ["GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, /header line/],
    ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, /HTTP\/1/],
    ["GET /\r\n\r\n", 400, /request line/],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, /chunk size/],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXX", 400, /chunked body/],
  ];
  for (const [text, status, message] of cases) {
    const { rejects, framing } = run([text]);
    assert.equal(rejects.length, 1, text);
    const reject = rejects[0] as Extract<FramingStep, { kind: "reject" }>;
    assert.equal(reject.status, status, text);
    assert.match(reject.message, message, text);
    assert.deepEqual(framing.feed(encode("GET / HTTP/1.1\r\n\r\n")), [], "nothing after a refusal");
  }
});

Deno.test("framing: a head over the limit is refused with 431, complete or not", () => {
  const limits = { maxHeadBytes: 100, maxLineBytes: 50 };
  const big = "GET / HTTP/1.1\r\nX-Big: " + "a".repeat(200);
  for (const chunks of [[big], [big + "\r\n\r\n"], bytewise(big)]) {
    const { rejects } = run(chunks, new RequestFraming(ID, limits));
    assert.equal((rejects[0] as { status: number }).status, 431);
  }
  // Bare LF line ends never make a head: the size limit (or the time-out) ends it.
  const { kinds } = run(["GET / HTTP/1.1\nHost: x\n\n"]);
  assert.deepEqual(kinds, ["start"]);
});

Deno.test("framing: a 60 KB head fed a byte at a time is linear work", () => {
  const text = "GET / HTTP/1.1\r\nX-Pad: " + "a".repeat(60_000) + "\r\n\r\n";
  const started = performance.now();
  const { kinds } = run(bytewise(text));
  assert.deepEqual(kinds, ["start", "head", "complete"]);
  // Quadratic re-copying would take seconds here; linear work takes milliseconds.
  assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
});
