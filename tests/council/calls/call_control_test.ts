/** A call's stop switch: a cut takes hold only while the call runs. */
import assert from "node:assert/strict";
import { CallControl } from "../../../src/council/calls/call_control.ts";
import type { AgentResult } from "../../../src/agents/types.ts";

const failed: AgentResult = {
  agent: "gemini",
  model: "m",
  role: "child",
  ok: false,
  text: "",
  error: "gemini: exit 1: 503",
  exitCode: 1,
  timedOut: false,
  aborted: false,
  durationMs: 10,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
};

Deno.test("call control: a cut after the call ended on its own is ignored (its reply shows no cut)", () => {
  const control = new CallControl(new AbortController().signal);
  assert.equal(control.settle(failed), undefined);
  // The quorum may come while the ended call's reply is still on its way to the council.
  control.cut({ kind: "quorum", why: "quorum reached", suspect: true });
  assert.equal(control.cutOff, undefined);
  assert.equal(control.signal.aborted, false);
});

Deno.test("call control: a cut while the call runs ends it and is what it settles to", () => {
  const control = new CallControl(new AbortController().signal);
  control.cut({ kind: "quorum", why: "quorum reached", suspect: true });
  assert.equal(control.signal.aborted, true);
  assert.equal(control.settle({ ...failed, aborted: true })?.suspect, true);
});
