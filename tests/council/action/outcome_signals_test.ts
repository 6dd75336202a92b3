/** Outcome signals: chosen-call ids, and the results the host's next request reports. */
import assert from "node:assert/strict";
import {
  chosenCallId,
  resolvedCalls,
  resultOf,
  turnOfCallId,
} from "../../../src/council/action/outcome_signals.ts";
import type { TranscriptEntry } from "../../../src/council/types.ts";

const call = (id: string): TranscriptEntry => ({ kind: "tool_call", id, name: "Bash", input: {} });
const result = (id: string, text: string, isError = false): TranscriptEntry => ({
  kind: "tool_result",
  id,
  text,
  isError,
});

Deno.test("a chosen call's id names its turn; other ids name none", () => {
  const id = chosenCallId("a1b2c3d4")!;
  assert.match(id, /^toolu_[A-Za-z0-9_]+$/);
  assert.equal(turnOfCallId(id), "a1b2c3d4");
  assert.notEqual(chosenCallId("a1b2c3d4"), id);
  assert.equal(turnOfCallId("toolu_01ABCdef"), undefined);
  assert.equal(turnOfCallId("toolu_cgw_a1b2c3d4_zz"), undefined);
  assert.equal(chosenCallId("bad id!"), undefined);
});

Deno.test("a result is ok, an error (is_error) or rejected (Claude Code's rejection texts)", () => {
  assert.equal(resultOf({ text: "1\tfirst line", isError: false }), "ok");
  assert.equal(resultOf({ text: "Exit code 1\nnot found", isError: true }), "error");
  assert.equal(
    resultOf({
      text: "The user doesn't want to proceed with this tool use. The tool use was rejected.",
      isError: true,
    }),
    "rejected",
  );
  assert.equal(
    resultOf({ text: "Tool use rejected with user message: no", isError: true }),
    "rejected",
  );
});

Deno.test("only the newest results for the council's own ids resolve calls", () => {
  const older = chosenCallId("turn-1")!;
  const newer = chosenCallId("turn-2")!;
  const transcript: TranscriptEntry[] = [
    { kind: "user", text: "fix it" },
    call(older),
    result(older, "done"),
    call(newer),
    call("toolu_host_own"),
    result(newer, "Exit code 2", true),
    result("toolu_host_own", "fine"),
    { kind: "user", text: "<system-reminder>…</system-reminder>" },
  ];
  assert.deepEqual(resolvedCalls(transcript), [
    { turn: "turn-2", toolUseId: newer, result: "error" },
  ]);
});

Deno.test("a continuation run by one child (an ordinary id) resolves nothing", () => {
  const transcript: TranscriptEntry[] = [
    { kind: "user", text: "fix it" },
    call("toolu_0123456789abcdef01234567"),
    result("toolu_0123456789abcdef01234567", "ok"),
  ];
  assert.deepEqual(resolvedCalls(transcript), []);
  assert.deepEqual(resolvedCalls([{ kind: "user", text: "hi" }]), []);
});
