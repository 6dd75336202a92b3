/** Which agents health puts on probation: back from a cool-down for not answering in time. */
import assert from "node:assert/strict";
import { AgentHealth } from "../../../src/council/calls/health.ts";
import { FakeClock } from "../../support/fake_clock.ts";

const HANG = { kind: "failed", reason: "unanswered within the longest grace", hang: true } as const;
const DOWN = { kind: "failed", reason: "503 UNAVAILABLE" } as const;

function health() {
  const clock = new FakeClock();
  return { clock, health: new AgentHealth({ failures: 2, cooldownMs: 60_000 }, clock) };
}

Deno.test("probation: after a cool-down for a hang, not during it", () => {
  const { clock, health: h } = health();
  h.record("gemini", HANG);
  assert.equal(h.onProbation("gemini"), false, "cooling down: not called at all");
  clock.advance(60_000);
  assert.equal(h.onProbation("gemini"), true);
  assert.equal(h.onProbation("codex"), false, "a healthy agent");
});

Deno.test("probation: an answer ends it; a turn that tells nothing keeps it", () => {
  const { clock, health: h } = health();
  h.record("gemini", HANG);
  clock.advance(60_000);
  h.record("gemini", { kind: "neutral" });
  assert.equal(h.onProbation("gemini"), true);
  h.record("gemini", { kind: "ok" });
  assert.equal(h.onProbation("gemini"), false);
});

Deno.test("probation: not after a cool-down for failures (an outage's member gets its grace)", () => {
  const { clock, health: h } = health();
  h.record("codex", DOWN);
  h.record("codex", DOWN);
  assert.equal(h.coolingDown("codex")?.state, "cooling-down");
  clock.advance(60_000);
  assert.equal(h.onProbation("codex"), false);
});

Deno.test("probation: a failure of its own after a hang's cool-down ends it", () => {
  const { clock, health: h } = health();
  h.record("gemini", HANG);
  clock.advance(60_000);
  // Failures in a row past the limit: the next cool-down is for failing, not for lateness.
  h.record("gemini", DOWN);
  clock.advance(120_000);
  assert.equal(h.onProbation("gemini"), false);
});

Deno.test("probation: the agent's status says so once its cool-down is over", () => {
  const { clock, health: h } = health();
  h.record("gemini", HANG);
  assert.equal(
    h.statusOf("gemini").probation,
    undefined,
    "cooling down: skipped, not on probation",
  );
  clock.advance(60_000);
  assert.deepEqual(h.statusOf("gemini"), {
    agent: "gemini",
    state: "failing",
    failuresInRow: 1,
    lastError: HANG.reason,
    probation: true,
  });
  h.record("gemini", { kind: "ok" });
  assert.equal(h.statusOf("gemini").probation, undefined);
});
