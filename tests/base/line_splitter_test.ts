import assert from "node:assert/strict";
import { LineSplitter } from "../../src/base/line_splitter.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("LineSplitter: lines across chunks, CRLF, and a last line without newline", () => {
  const splitter = new LineSplitter(100, "drop");
  assert.deepEqual(splitter.push(bytes("ab")), []);
  assert.deepEqual(splitter.push(bytes("c\r\nd\n\ne")), ["abc", "d", ""]);
  assert.deepEqual(splitter.push(bytes("f")), []);
  assert.deepEqual(splitter.end(), ["ef"]);
  assert.deepEqual(splitter.end(), []);
});

Deno.test("LineSplitter: multi-byte characters split between chunks decode whole", () => {
  const splitter = new LineSplitter(100, "drop");
  const data = bytes("héllo ✓\n");
  assert.deepEqual(splitter.push(data.subarray(0, 2)), []);
  assert.deepEqual(splitter.push(data.subarray(2)), ["héllo ✓"]);
});

Deno.test("LineSplitter: an over-long line is dropped whole, the next line survives", () => {
  const splitter = new LineSplitter(10, "drop");
  assert.deepEqual(splitter.push(bytes("0123456789ABC")), []);
  assert.deepEqual(splitter.push(bytes("more and more and more")), []);
  assert.deepEqual(splitter.push(bytes("\nok\n")), ["ok"]);
  assert.equal(splitter.overflowed, 1);
});

Deno.test("LineSplitter: memory held for an endless line never exceeds the limit", () => {
  for (const mode of ["drop", "truncate"] as const) {
    const splitter = new LineSplitter(4096, mode);
    const chunk = new Uint8Array(1000).fill(120);
    for (let i = 0; i < 100; i++) {
      splitter.push(chunk);
      assert.ok(splitter.bufferedBytes <= 4096, `${mode}: ${splitter.bufferedBytes} bytes held`);
    }
    assert.equal(splitter.bufferedBytes, mode === "drop" ? 0 : 4096);
  }
});

Deno.test("LineSplitter: truncate mode keeps the head of an over-long line", () => {
  const splitter = new LineSplitter(4, "truncate");
  assert.deepEqual(splitter.push(bytes("abcdefgh\nxy\n")), ["abcd", "xy"]);
  assert.equal(splitter.overflowed, 1);
});
