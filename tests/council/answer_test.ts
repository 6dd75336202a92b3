import assert from "node:assert/strict";
import { AnswerWriter } from "../../src/council/answer.ts";

function writer() {
  const sent: string[] = [];
  let begun = 0;
  const w = new AnswerWriter(() => begun++, (t) => sent.push(t));
  return { w, sent, begun: () => begun };
}

Deno.test("AnswerWriter: begins once, before the first delta; empty writes are ignored", () => {
  const { w, sent, begun } = writer();
  w.write("");
  assert.equal(begun(), 0);
  assert.equal(w.started, false);
  w.write("a");
  w.write("b");
  assert.equal(begun(), 1);
  assert.deepEqual(sent, ["a", "b"]);
  assert.equal(w.text, "ab");
});

Deno.test("AnswerWriter.complete: sends only what the deltas did not carry", () => {
  const cases: [string[], string, string][] = [
    [[], "whole", "whole"],
    [["Hel"], "Hello", "Hello"],
    [["Let me look.", "The answer."], "The answer.", "Let me look.The answer."],
    [["draft"], "different final", "draft\n\ndifferent final"],
    [["kept"], "  ", "kept"],
  ];
  for (const [deltas, final, expected] of cases) {
    const { w } = writer();
    for (const d of deltas) w.write(d);
    w.complete(final);
    assert.equal(w.text, expected, JSON.stringify({ deltas, final }));
  }
});

Deno.test("AnswerWriter: segments reconcile per writer", () => {
  const { w } = writer();
  w.write("partial");
  w.newSegment();
  assert.equal(w.segment, "");
  w.complete("partial");
  assert.equal(w.text, "partialpartial", "a new writer's text is not matched against the old");
});
