import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import {
  finishLine,
  formatTokens,
  heartbeatLine,
  recapLine,
  telemetryLine,
} from "../../../src/council/turn/progress.ts";
import type { AgentResult } from "../../../src/agents/types.ts";
import {
  byAgent,
  fakeAgents,
  gate,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";

/** Lets queued microtasks and the event queue drain without touching timers. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

Deno.test("progress formats: telemetry, heartbeat, recap", () => {
  assert.equal(formatTokens(950), "950");
  assert.equal(formatTokens(1234), "1.2k");
  assert.equal(formatTokens(56_789), "57k");
  assert.equal(formatTokens(1_234_567), "1.2M");
  assert.equal(telemetryLine("codex", 1234, 12_900), "codex: ~1.2k tok · 12s");
  assert.equal(
    heartbeatLine(15_400, ["codex", "gemini"]),
    "still working — 15s elapsed (waiting on: codex, gemini)",
  );
  assert.equal(
    recapLine(["claude", "codex", "gemini"], 41_234, 4, 0.12344),
    "council: 3 agents (claude, codex, gemini) · 41.2s · 4 calls · $0.1234",
  );
  assert.equal(
    recapLine(["claude"], 800, 1, 0),
    "council: 1 agent (claude) · 0.8s · 1 call · $0.0000",
  );
});

Deno.test("progress formats: finish lines carry duration, usage and cost, or the error", () => {
  const base: AgentResult = {
    agent: "codex",
    model: "gpt-5.5",
    role: "child",
    ok: true,
    text: "hi",
    exitCode: 0,
    timedOut: false,
    aborted: false,
    durationMs: 12_345,
    usage: { inputTokens: 1200, outputTokens: 80, costUsd: 0.0123, estimated: true },
  };
  assert.equal(finishLine("codex", base), "codex: done in 12.3s · 1.2k in / 80 out · ~$0.0123");
  assert.equal(
    finishLine("codex", { ...base, ok: false, error: "codex: exit 1\nstack", exitCode: 1 }),
    "codex: failed after 12.3s — exit 1 stack",
  );
  // Only the runner's own prefix (the agent's name) is dropped.
  assert.equal(
    finishLine("codex#2", { ...base, ok: false, error: "spawn failed: codex: not found" }),
    "codex#2: failed after 12.3s — spawn failed: codex: not found",
  );
  assert.equal(
    finishLine("codex", { ...base, ok: false, aborted: true }),
    "codex: cancelled after 12.3s",
  );
});

Deno.test("progress: heartbeat every heartbeatMs names the agents still awaited", async () => {
  const codexGate = gate();
  const geminiGate = gate();
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "A" },
    "codex:child": { text: "B", gate: codexGate.promise },
    "gemini:child": { text: "C", gate: geminiGate.promise },
    "claude:synth": { text: "S" },
  }));
  const clock = new FakeClock();
  const { runTurn } = createCouncil({
    config: testConfig({ heartbeatMs: 5000, telemetryMs: 100_000 }),
    runAgent: fake.runAgent,
    clock,
  });
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^claude: done/);
  clock.advance(4999);
  await settle();
  assert.ok(!watcher.progress.some((l) => l.startsWith("still working")));
  clock.advance(1);
  await watcher.progressMatching(/^still working — 5s elapsed \(waiting on: codex, gemini\)$/);
  codexGate.open();
  await watcher.progressMatching(/^codex: done/);
  clock.advance(5000);
  await watcher.progressMatching(/^still working — 10s elapsed \(waiting on: gemini\)$/);
  geminiGate.open();
  const log = await watcher.finished;
  assert.equal(log.progress.filter((l) => l.startsWith("still working")).length, 2);
  assert.equal(clock.pending, 0, "heartbeat and telemetry timers cleared");
});

Deno.test("progress: telemetry is throttled to telemetryMs and skips unchanged counters", async () => {
  const release = gate();
  const fake = fakeAgents(byAgent({
    "claude:child": {
      text: "A",
      earlyUsage: { inputTokens: 1000, outputTokens: 234 },
      gate: release.promise,
    },
    "*:child": { text: "B" },
    "claude:synth": { text: "S" },
  }));
  const clock = new FakeClock();
  const { runTurn } = createCouncil({
    config: testConfig({ heartbeatMs: 100_000, telemetryMs: 2000 }),
    runAgent: fake.runAgent,
    clock,
  });
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^gemini: done/);
  await settle();
  assert.ok(!watcher.progress.some((l) => l.includes("tok ·")), "nothing before the first tick");
  clock.advance(2000);
  await watcher.progressMatching(/^claude: ~1\.2k tok · 2s$/);
  clock.advance(2000);
  await settle();
  assert.equal(
    watcher.progress.filter((l) => l.includes("tok ·")).length,
    1,
    "unchanged counters are not repeated",
  );
  release.open();
  await watcher.finished;
  assert.equal(clock.pending, 0);
});

Deno.test("progress: the decision, each finish line and the recap, in order", async () => {
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "A", durationMs: 2000 },
    "codex:child": { ok: false, error: "codex: exit 1: boom", durationMs: 500 },
    "gemini:child": { text: "C", durationMs: 3000, usage: { costUsd: 0.1, estimated: true } },
    "claude:synth": { text: "S" },
  }));
  const clock = new FakeClock();
  const { runTurn } = createCouncil({ config: testConfig(), runAgent: fake.runAgent, clock });
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  const log = await watcher.finished;
  const p = log.progress;
  assert.equal(p[0], "consulting 3 agents: claude, codex, gemini — fanOutPolicy always");
  assert.ok(p.includes("claude: done in 2.0s · 100 in / 50 out · $0.0100"));
  assert.ok(p.includes("codex: failed after 0.5s — exit 1: boom"), "the agent is named once");
  assert.ok(p.includes("gemini: done in 3.0s · 100 in / 50 out · ~$0.1000"));
  assert.ok(p.includes("claude synthesizes 2 anonymised candidates"));
  // The synthesizer's short answer is held until it ends (it could have been narration before
  // a tool use), so the recap that closes progress already has every call's cost.
  assert.equal(
    p.at(-1),
    "council: 3 agents (claude, codex, gemini) · 0.0s · 4 calls · $0.1300 · wrote the answer " +
      "from 2 candidates",
  );
});
