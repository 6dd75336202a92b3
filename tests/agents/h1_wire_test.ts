/** HTTP/1.1 wire format: request heads out, response heads, body framing and chunked bodies in. */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bodyFraming,
  ChunkedDecoder,
  headEnd,
  parseResponseHead,
  ProtocolError,
  requestHead,
} from "../../src/agents/h1_wire.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

Deno.test("h1 request head: path and query, host, the caller's headers, content-length last", () => {
  const head = requestHead(
    "POST",
    new URL("http://[::1]:8080/v1/chat/completions?x=1"),
    { "content-type": "application/json", authorization: "Bearer k", Host: "evil" },
    42,
  );
  assert.equal(
    head,
    "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: [::1]:8080\r\n" +
      "content-type: application/json\r\nauthorization: Bearer k\r\ncontent-length: 42\r\n\r\n",
  );
});

Deno.test("h1 request head: a header that could smuggle another is refused", () => {
  const url = new URL("http://localhost/v1/messages");
  assert.throws(() => requestHead("POST", url, { "x-a": "1\r\nx-b: 2" }, 0), TypeError);
  assert.throws(() => requestHead("POST", url, { "x-a": "1\nx-b: 2" }, 0), TypeError);
  assert.throws(() => requestHead("POST", url, { "x a": "1" }, 0), TypeError);
  assert.throws(() => requestHead("POST", url, { "x-a\r\n": "1" }, 0), TypeError);
});

Deno.test("h1 head end: found after the blank line, also when scanning resumes mid-way", () => {
  const bytes = encoder.encode("HTTP/1.1 200 OK\r\na: b\r\n\r\nbody");
  assert.equal(headEnd(bytes), 25);
  assert.equal(headEnd(bytes, 22), 25);
  assert.equal(headEnd(encoder.encode("HTTP/1.1 200 OK\r\na: b\r\n")), -1);
});

Deno.test("h1 response head: status, reason, repeated headers, keep-alive by version and Connection", () => {
  const head = parseResponseHead(
    "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nx-a: 1\r\nx-a: 2\r\n\r\n",
  );
  assert.equal(head.status, 429);
  assert.equal(head.statusText, "Too Many Requests");
  assert.equal(head.headers.get("retry-after"), "3");
  assert.equal(head.headers.get("x-a"), "1, 2");
  assert.equal(head.keepAlive, true);
  assert.equal(parseResponseHead("HTTP/1.1 200\r\n\r\n").statusText, "");
  assert.equal(
    parseResponseHead("HTTP/1.1 200 OK\r\nx-long: one\r\n  two\r\n\ttwo more\r\n\r\n").headers
      .get("x-long"),
    "one two two more",
    "obs-fold joins with a space",
  );
  assert.equal(parseResponseHead("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").keepAlive, false);
  assert.equal(parseResponseHead("HTTP/1.0 200 OK\r\n\r\n").keepAlive, false);
  assert.equal(
    parseResponseHead("HTTP/1.0 200 OK\r\nconnection: keep-alive\r\n\r\n").keepAlive,
    true,
  );
});

Deno.test("h1 response head: a bad status line or header line is a protocol error", () => {
  assert.throws(() => parseResponseHead("HTTP/2 200\r\n\r\n"), ProtocolError);
  assert.throws(() => parseResponseHead("SSH-2.0-OpenSSH\r\n\r\n"), ProtocolError);
  assert.throws(() => parseResponseHead("HTTP/1.1 200 OK\r\nno colon\r\n\r\n"), ProtocolError);
  assert.throws(() => parseResponseHead("HTTP/1.1 200 OK\r\n: empty\r\n\r\n"), ProtocolError);
});

Deno.test("h1 body framing: chunked over length, length, none for 204/304/1xx, else until close", () => {
  const framing = (status: number, headers: string) =>
    bodyFraming("POST", parseResponseHead(`HTTP/1.1 ${status} X\r\n${headers}\r\n`));
  assert.deepEqual(framing(200, "transfer-encoding: chunked\r\ncontent-length: 5\r\n"), {
    kind: "chunked",
  });
  assert.deepEqual(framing(200, "content-length: 5\r\n"), { kind: "length", length: 5 });
  assert.deepEqual(framing(200, "content-length: 5\r\ncontent-length: 5\r\n"), {
    kind: "length",
    length: 5,
  });
  assert.deepEqual(framing(204, ""), { kind: "none" });
  assert.deepEqual(framing(304, "content-length: 5\r\n"), { kind: "none" });
  assert.deepEqual(framing(200, ""), { kind: "close" });
  assert.deepEqual(framing(200, "transfer-encoding: gzip\r\n"), { kind: "close" });
  assert.throws(() => framing(200, "content-length: 5\r\ncontent-length: 6\r\n"), ProtocolError);
  assert.throws(() => framing(200, "content-length: -1\r\n"), ProtocolError);
});

/** Decodes `wire` fed in the given pieces; returns the body and the bytes after its end. */
function dechunk(wire: Uint8Array, cuts: number[]): { body: string; rest: string; done: boolean } {
  const chunked = new ChunkedDecoder();
  const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
  let body = "";
  let from = 0;
  for (const to of [...points, wire.length]) {
    // Each piece in its own array, as a socket read would bring it.
    const piece = wire.slice(from, to);
    const out = chunked.decode(piece, 0, piece.length);
    body += decoder.decode(piece.subarray(0, out.end), { stream: true });
    if (out.done) {
      return { body, rest: decoder.decode(wire.subarray(from + out.consumed)), done: true };
    }
    from = to;
  }
  return { body, rest: "", done: false };
}

Deno.test("h1 chunked: sizes in hex with extensions, trailers skipped, what follows left alone", () => {
  const wire = encoder.encode(
    "5\r\nhello\r\nA;name=v\r\n, world!!!\r\n0\r\nx-trailer: 1\r\n\r\nNEXT",
  );
  assert.deepEqual(dechunk(wire, []), { body: "hello, world!!!", rest: "NEXT", done: true });
});

Deno.test("h1 chunked: many chunks in one read become one run of bytes in the same array", () => {
  const wire = encoder.encode("3\r\nabc\r\n2\r\nde\r\n1\r\nf\r\n");
  const out = new ChunkedDecoder().decode(wire, 0, wire.length);
  assert.equal(decoder.decode(wire.subarray(0, out.end)), "abcdef");
  assert.equal(out.consumed, wire.length);
  assert.equal(out.done, false);
});

Deno.test("h1 chunked: bad sizes and missing CRLFs are protocol errors", () => {
  const fails = (text: string) => {
    const bytes = encoder.encode(text);
    assert.throws(() => new ChunkedDecoder().decode(bytes, 0, bytes.length), ProtocolError, text);
  };
  fails("zz\r\nab\r\n");
  fails("\r\n");
  fails("2\r\nabX\r\n");
  fails(`${"1".repeat(5000)}`);
});

Deno.test("h1 chunked: any split of the wire bytes decodes to the same body (property)", () => {
  fc.assert(fc.property(
    fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 8 }),
    fc.array(fc.nat(), { maxLength: 10 }),
    fc.boolean(),
    (parts, cuts, extensions) => {
      const wire = encoder.encode(
        parts.map((p) =>
          `${encoder.encode(p).length.toString(16)}${extensions ? ";e=1" : ""}\r\n${p}\r\n`
        ).join("") + "0\r\n\r\nAFTER",
      );
      const got = dechunk(wire, cuts);
      assert.deepEqual(got, { body: parts.join(""), rest: "AFTER", done: true });
    },
  ));
});
