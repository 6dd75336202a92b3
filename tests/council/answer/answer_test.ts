import assert from "node:assert/strict";
import { AnswerWriter, NARRATION_HOLD_CHARS } from "../../../src/council/answer/answer.ts";

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

const LONG = "Each step of the answer is explained here in full. ".repeat(
  Math.ceil(NARRATION_HOLD_CHARS / 40),
);

Deno.test("AnswerWriter.stream: narration before a tool use never reaches the answer", () => {
  const { w, sent, begun } = writer();
  w.stream("Let me look at the ");
  w.stream("files first.");
  assert.equal(begun(), 0, "held: it may be narration");
  assert.equal(w.toolUsed(), "Let me look at the files first.");
  w.stream("\n\nThe parser drops empty rows.");
  w.complete("The parser drops empty rows.");
  assert.equal(w.text, "The parser drops empty rows.");
  assert.deepEqual(sent, ["The parser drops empty rows."]);
});

Deno.test("AnswerWriter.stream: a long answer streams live before the writer finishes", () => {
  const { w, sent } = writer();
  w.stream(LONG);
  assert.deepEqual(sent, [LONG], "sent once long enough to be the answer");
  w.stream("More.");
  assert.deepEqual(sent, [LONG, "More."], "then as it comes");
  w.complete(`${LONG}More.`);
  assert.equal(w.text, `${LONG}More.`);
});

Deno.test("AnswerWriter.stream: text after a tool use is set apart from text already sent", () => {
  const { w } = writer();
  w.stream(LONG.trimEnd());
  assert.equal(w.toolUsed(), "", "already sent: nothing to narrate");
  w.stream("Result.");
  w.complete("Result.");
  assert.equal(w.text, `${LONG.trimEnd()}\n\nResult.`);
});

Deno.test("AnswerWriter.complete: the final message wins over held text; held text when there is none", () => {
  const a = writer();
  a.w.stream("draft of the reply");
  a.w.complete("The reply.");
  assert.equal(a.w.text, "The reply.");
  const b = writer();
  b.w.stream("\n\nonly streamed");
  b.w.complete("");
  assert.equal(b.w.text, "only streamed");
  assert.equal(b.w.sent, "only streamed");
});
