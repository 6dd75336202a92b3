/**
 * The latency bench's pure parts: the fake's script for council prompts, and the floor of a
 * council turn read from the fake's records.
 */
import assert from "node:assert/strict";
import { floorOf, latencyAnswer } from "../../scripts/bench/scenarios/latency.ts";
import type { RecordedRequest } from "../support/fake_vendor/mod.ts";

function call(prompt: string, times: Partial<RecordedRequest> = {}): RecordedRequest {
  return {
    api: "messages",
    prompt,
    caller: "sonnet",
    arrivedAt: 0,
    firstTokenAt: NaN,
    repliedAt: NaN,
    ...times,
  } as RecordedRequest;
}

Deno.test("latency bench: drafts and written answers are filler; proposals and picks are scripted", () => {
  assert.equal(latencyAnswer(call("=== Your task ===")), undefined);
  assert.equal(latencyAnswer(call("=== Candidate replies ===")), undefined, "writes");
  assert.deepEqual(latencyAnswer(call("=== Candidate replies ==="), true), {
    json: { choose: "A" },
  });
  assert.deepEqual(latencyAnswer(call("=== Proposed next steps ===")), { json: { choose: 1 } });
  assert.deepEqual(latencyAnswer(call("=== Tools the assistant may call ===")), {
    json: { kind: "tool", name: "Read", input: { file_path: "/tmp/notes-sonnet.txt" } },
  });
});

Deno.test("latency bench: the floor is the last child the synthesizer waited for plus its first token", () => {
  const calls = [
    call("draft", { arrivedAt: 100, repliedAt: 2100 }),
    call("draft", { arrivedAt: 100, repliedAt: 3100 }),
    call("draft", { arrivedAt: 100, repliedAt: 9000 }), // cut off: replied after the synthesis began
    call("=== Candidate replies ===", { arrivedAt: 3200, firstTokenAt: 5000, repliedAt: 9000 }),
  ];
  assert.equal(floorOf(calls, 0), 3100 + 1800);
  assert.ok(Number.isNaN(floorOf(calls.slice(0, 3), 0)), "no synthesizer, no floor");
});
