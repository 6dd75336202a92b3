/**
 * Agent health: an agent whose last calls failed is skipped for a cool-down and tried again
 * after it; a child stuck retrying a failing upstream is cut off; agents that failed in a turn
 * do not synthesize it.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import type { ConfigFile } from "../../../src/config/mod.ts";
import { AgentHealth } from "../../../src/council/calls/health.ts";
import {
  byAgent,
  collect,
  type FakeReply,
  type FakeScript,
  gate,
  READ_TOOL,
  recordingCouncil,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";
import { within } from "../../support/wait.ts";

function council(file: ConfigFile, script: FakeScript) {
  const c = recordingCouncil(file, script);
  // Bounded: a call nothing ends (a hanging fake) fails the test instead of hanging it.
  const turn = (options: Parameters<typeof testRequest>[0] = {}) =>
    within(
      collect(c.runTurn(testRequest(options), new AbortController().signal)),
      "the turn",
      5000,
    );
  return { ...c, turn };
}

const HEALTH = { health: { failures: 2, cooldownMs: 60_000 } };
const DOWN: FakeReply = { ok: false, error: "gemini: exit 1: 503 UNAVAILABLE" };
const childAgents = (calls: { role: string; agent: { name: string } }[]) =>
  calls.filter((c) => c.role === "child").map((c) => c.agent.name);

Deno.test("health: an agent failing K calls in a row is skipped for the cool-down, then tried again", async () => {
  let geminiWorks = false;
  const { fake, clock, turn, agentHealth } = council(
    HEALTH,
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": { text: "BRAVO" },
      "gemini:child": () => (geminiWorks ? { text: "CHARLIE" } : DOWN),
      "claude:synth": { text: "combined" },
    }),
  );
  await turn();
  assert.equal(agentHealth().find((s) => s.agent === "gemini")?.state, "failing");
  await turn();
  const cooling = agentHealth().find((s) => s.agent === "gemini");
  assert.deepEqual(cooling, {
    agent: "gemini",
    state: "cooling-down",
    failuresInRow: 2,
    lastError: "gemini: exit 1: 503 UNAVAILABLE",
    coolingUntil: clock.now() + 60_000,
  });

  fake.calls.length = 0;
  clock.advance(20_000);
  const skipped = await turn();
  assert.deepEqual(childAgents(fake.calls), ["claude", "codex"]);
  assert.ok(
    skipped.progress.includes(
      "gemini skipped — cooling down after 2 failed calls in a row " +
        "(gemini: exit 1: 503 UNAVAILABLE); back in 40.0s",
    ),
    skipped.progress.join("\n"),
  );
  assert.ok(skipped.progress.includes("consulting 2 agents: claude, codex — fanOutPolicy always"));

  // Recovery: after the cool-down the agent is consulted again; one success clears its record.
  fake.calls.length = 0;
  clock.advance(40_000);
  geminiWorks = true;
  const back = await turn();
  assert.deepEqual(childAgents(fake.calls), ["claude", "codex", "gemini"]);
  assert.ok(!back.progress.some((l) => l.includes("skipped")));
  assert.deepEqual(agentHealth().find((s) => s.agent === "gemini"), {
    agent: "gemini",
    state: "healthy",
    failuresInRow: 0,
  });
});

Deno.test("health: a success between failures resets the count", async () => {
  let reply: FakeReply = DOWN;
  const { fake, turn } = council(
    HEALTH,
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": () => reply,
      "claude:synth": { text: "combined" },
    }),
  );
  await turn();
  reply = { text: "CHARLIE" };
  await turn();
  reply = DOWN;
  await turn();
  fake.calls.length = 0;
  await turn();
  assert.deepEqual(childAgents(fake.calls), ["claude", "codex", "gemini"], "not skipped");
});

Deno.test("health: a probe failing after the cool-down starts the next one at once, twice as long", async () => {
  const { fake, clock, turn, agentHealth } = council(
    HEALTH,
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": DOWN,
      "claude:synth": { text: "combined" },
    }),
  );
  await turn();
  await turn();
  clock.advance(60_000);
  fake.calls.length = 0;
  await turn();
  assert.ok(childAgents(fake.calls).includes("gemini"), "probed after the cool-down");
  const status = agentHealth().find((s) => s.agent === "gemini");
  assert.equal(status?.state, "cooling-down");
  assert.equal(status?.failuresInRow, 3);
  assert.equal(status?.coolingUntil, clock.now() + 120_000);
});

Deno.test("health: cool-downs double while the agent keeps failing, up to 16 ×, and start over once it answers", () => {
  const clock = new FakeClock();
  const health = new AgentHealth({ failures: 1, cooldownMs: 1_000 }, clock);
  const lengths: number[] = [];
  for (let i = 0; i < 7; i++) {
    health.record("gemini", { kind: "failed", reason: "503" });
    lengths.push(health.statusOf("gemini").coolingUntil! - clock.now());
    clock.advance(lengths.at(-1)!);
  }
  assert.deepEqual(lengths, [1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000]);
  health.record("gemini", { kind: "ok" });
  health.record("gemini", { kind: "failed", reason: "503" });
  assert.equal(health.statusOf("gemini").coolingUntil! - clock.now(), 1_000);
});

Deno.test("health: failures 0 never skips an agent", async () => {
  const { fake, turn } = council(
    { health: { failures: 0, cooldownMs: 60_000 } },
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": DOWN,
      "claude:synth": { text: "combined" },
    }),
  );
  for (let i = 0; i < 3; i++) await turn();
  fake.calls.length = 0;
  await turn();
  assert.ok(childAgents(fake.calls).includes("gemini"));
});

Deno.test("health: cancelled calls and one straggler cut off while working do not count", async () => {
  const { clock, runTurn, agentHealth } = council(
    { ...HEALTH, quorum: { minAnswers: 2, graceMs: 1000 } },
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": { hang: true },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum:/);
  clock.advance(1000);
  await watcher.finished;
  for (let i = 0; i < 3; i++) {
    const controller = new AbortController();
    const cancelled = new TurnWatcher(runTurn(testRequest(), controller.signal));
    await cancelled.progressMatching(/^codex: done/);
    controller.abort();
    await cancelled.finished;
  }
  assert.equal(agentHealth().find((s) => s.agent === "gemini")?.state, "healthy");
});

Deno.test("health: a straggler cut off unanswered at its grace's end missed; unanswered within the longest grace too, it hangs and cools down", async () => {
  // Two such misses in a row used to count as a failure, and the suspect's cut that followed as
  // the next: an agent slower than its grace was dropped for good (slow_member_test.ts). Now its
  // next grace is the longest, which a slow agent answers within (raised here above the default
  // longest grace, which is the default grace).
  const { clock, runTurn, agentHealth, fake } = council(
    { ...HEALTH, quorum: { minAnswers: 2, graceMs: 1000, maxGraceMs: 10_000 } },
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": { hang: true, durationMs: 1500 },
      "claude:synth": { text: "combined" },
    }),
  );
  const first = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await first.progressMatching(/^quorum: 2 of 3 answers in — gemini gets 1\.0s more$/);
  clock.advance(1000);
  await within(first.finished, "the first turn");
  assert.deepEqual(agentHealth().find((s) => s.agent === "gemini"), {
    agent: "gemini",
    state: "healthy",
    failuresInRow: 0,
    missesInRow: 1,
  });
  const second = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await second.progressMatching(/^quorum: 2 of 3 answers in — gemini gets 10\.0s more$/);
  clock.advance(10_000);
  await within(second.finished, "the second turn");
  const gemini = agentHealth().find((s) => s.agent === "gemini");
  assert.equal(gemini?.state, "cooling-down");
  assert.equal(gemini?.failuresInRow, 1);
  assert.match(
    gemini?.lastError ?? "",
    /^gemini: unanswered within the longest grace \(10\.0s\) 2 turns in a row: hanging, or slower than quorum\.maxGraceMs allows$/,
  );
  fake.calls.length = 0;
  const third = await within(
    new TurnWatcher(runTurn(testRequest(), new AbortController().signal)).finished,
    "the third turn",
  );
  assert.deepEqual(childAgents(fake.calls), ["claude", "codex"]);
  assert.ok(
    third.progress.some((l) => l.startsWith("gemini skipped — cooling down after 1 failed call ")),
  );
});

Deno.test("health: a straggler cut off while it retried its upstream counts as failed, named by what it answered", async () => {
  const { clock, runTurn, agentHealth } = council(
    { ...HEALTH, quorum: { minAnswers: 2, graceMs: 1000 } },
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": { hang: true, retries: [{ attempt: 1, reason: "503 UNAVAILABLE" }] },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum:/);
  clock.advance(1000);
  await watcher.finished;
  const status = agentHealth().find((s) => s.agent === "gemini");
  assert.equal(status?.failuresInRow, 1);
  assert.match(
    status?.lastError ?? "",
    /^gemini: cut off after .* \(quorum.*; its upstream was failing: 503 UNAVAILABLE$/,
  );
});

Deno.test("health: a straggler cut for its silence after a failure keeps that failure as the last error", async () => {
  let geminiCalls = 0;
  const { runTurn, agentHealth, clock } = council(
    { ...HEALTH, quorum: { minAnswers: 2, graceMs: 3000 } },
    byAgent({
      "*:child": { text: "fine" },
      "gemini:child": () => ++geminiCalls === 1 ? DOWN : { hang: true },
      "claude:synth": { text: "combined" },
    }),
  );
  for (const name of ["the first turn", "the second turn"]) {
    await within(
      new TurnWatcher(runTurn(testRequest(), new AbortController().signal)).finished,
      name,
      5000,
    );
  }
  // Cut at the quorum as a suspect: the council's not waiting is no new failure.
  const suspectCut = agentHealth().find((s) => s.agent === "gemini");
  assert.equal(suspectCut?.state, "failing");
  assert.equal(suspectCut?.failuresInRow, 1);
  assert.equal(suspectCut?.lastError, "gemini: exit 1: 503 UNAVAILABLE");
  // Its next chance, silent to its grace's end: the failure going on, the second in a row.
  const third = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await third.progressMatching(/gemini gets 3\.0s more$/);
  clock.advance(3000);
  await within(third.finished, "the third turn");
  const status = agentHealth().find((s) => s.agent === "gemini");
  assert.equal(status?.state, "cooling-down");
  assert.equal(status?.lastError, "gemini: exit 1: 503 UNAVAILABLE");
});

Deno.test("health: a single-agent turn moves to the first agent not cooling down", async () => {
  const { fake, turn } = council(
    { ...HEALTH, fanOutPolicy: "never" },
    byAgent({
      "claude:child": { ok: false, error: "claude: exit 1: 529" },
      "*:child": { text: "ok" },
    }),
  );
  await turn();
  await turn();
  fake.calls.length = 0;
  const log = await turn();
  assert.deepEqual(childAgents(fake.calls), ["codex"]);
  assert.ok(log.progress.some((l) => l.startsWith("claude skipped — cooling down")));
  assert.ok(log.progress.some((l) => l.startsWith("consulting one agent: codex")));
  assert.deepEqual(log.outcome, { kind: "answer", text: "ok" });
});

Deno.test("health: when every agent is cooling down they are tried anyway", async () => {
  const { fake, turn } = council(
    { ...HEALTH, fanOutPolicy: "never" },
    byAgent({ "*:child": { ok: false, error: "down" } }),
  );
  // The single child moves from agent to agent as each one cools down.
  for (let i = 0; i < 6; i++) await turn();
  fake.calls.length = 0;
  const log = await turn();
  assert.equal(fake.calls.length, 1);
  assert.ok(log.progress.includes("every agent is cooling down after failures — trying anyway"));
});

Deno.test("health: the fan-out judge cooling down is skipped and one agent runs", async () => {
  const { fake, turn } = council(
    { ...HEALTH, fanOutPolicy: "necessary" },
    byAgent({ "judge:judge": { ok: false, error: "judge: exit 1" }, "*:child": { text: "ok" } }),
  );
  await turn();
  await turn();
  fake.calls.length = 0;
  const log = await turn();
  assert.equal(fake.calls.filter((c) => c.role === "judge").length, 0);
  assert.ok(log.progress.some((l) => l.startsWith("fan-out judge skipped — cooling down")));
  assert.ok(log.progress.some((l) => l.includes("judge cooling down: running one agent")));
});

Deno.test("retries: a child announcing more than maxUpstreamRetries retries is cut off as failed", async () => {
  const { fake, turn, records, agentHealth } = council(
    { maxUpstreamRetries: 2 },
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": {
        hang: true,
        durationMs: 2100,
        retries: [
          { attempt: 1, maxAttempts: 5, reason: "server busy" },
          { attempt: 2, maxAttempts: 5, reason: "server busy" },
          { attempt: 3, maxAttempts: 5, reason: "server busy" },
        ],
      },
      "gemini:child": { text: "CHARLIE" },
      "claude:synth": { text: "combined" },
    }),
  );
  // No clock advance and no time-out: only the retry count can end codex's call.
  const log = await turn();
  assert.ok(
    log.progress.includes("codex cut off after 2.1s — 3 upstream retries, last: server busy"),
    log.progress.join("\n"),
  );
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 1);
  const codex = records[0].calls.find((c) => c.label === "codex");
  assert.equal(codex?.cutOff, "retries");
  assert.equal(codex?.ok, false);
  assert.equal(codex?.aborted, false, "a failure, not a cancellation");
  assert.equal(agentHealth().find((s) => s.agent === "codex")?.failuresInRow, 1);
  assert.match(
    log.progress.at(-1)!,
    / · codex cut off after 2\.1s · wrote the answer from 2 candidates$/,
  );
});

Deno.test("retries: up to maxUpstreamRetries retries are let run", async () => {
  const release = gate();
  const { runTurn } = council(
    // Waiting for every child (with a quorum in, a failing upstream is not waited for).
    { maxUpstreamRetries: 2, quorum: { minAnswers: 0 } },
    byAgent({
      "*:child": { text: "fine" },
      "codex:child": {
        text: "BRAVO",
        gate: release.promise,
        retries: [{ attempt: 1, reason: "529" }, { attempt: 2, reason: "529" }],
      },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^gemini: done/);
  release.open();
  const log = await watcher.finished;
  assert.ok(!log.progress.some((l) => l.includes("cut off")));
  assert.ok(log.progress.some((l) => l.startsWith("codex: done")));
});

Deno.test("synthesizer: an agent that failed as a child in this turn is never the fallback", async () => {
  let codexChildren = 0;
  const { fake, turn } = council(
    { councilSize: 6, quorum: { minAnswers: 0, graceMs: 0 } },
    byAgent({
      "*:child": { text: "fine" },
      // codex runs two children (codex, codex#2): the first answers, the second fails.
      "codex:child": () =>
        ++codexChildren === 1 ? { text: "BRAVO" } : { ok: false, error: "codex: exit 1" },
      "claude:synth": { ok: false, error: "claude: exit 1: 529" },
      "*:synth": { text: "combined" },
    }),
  );
  await turn();
  const synths = fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name);
  assert.deepEqual(synths, ["claude", "gemini"], "codex (one child ok, one failed) is passed over");
});

Deno.test("synthesizer: agent 0 cooling down does not synthesize; the next one that answered does", async () => {
  const { fake, turn } = council(
    HEALTH,
    byAgent({
      "claude:child": { ok: false, error: "claude: exit 1: 529" },
      "claude:synth": { ok: false, error: "claude: exit 1: 529" },
      "*:child": { text: "fine" },
      "*:synth": { text: "combined" },
    }),
  );
  // Turn 1: claude fails as a child and as the synthesizer: two in a row, it cools down.
  await turn();
  fake.calls.length = 0;
  const log = await turn();
  assert.deepEqual(childAgents(fake.calls), ["codex", "gemini"]);
  const synths = fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name);
  assert.deepEqual(synths, ["codex"]);
  assert.ok(log.progress.includes("claude does not synthesize: it is cooling down"));
});

Deno.test("synthesizer: agent 0 whose child was cut off retrying its upstream does not synthesize", async () => {
  const { fake, turn } = council(
    { maxUpstreamRetries: 1 },
    byAgent({
      "claude:child": { hang: true, retries: [{ attempt: 1 }, { attempt: 2 }] },
      "codex:child": { text: read("/a") },
      "gemini:child": { text: read("/b") },
      "*:synth": { text: '{"choose": 1}' },
    }),
  );
  const log = await turn({ tools: [READ_TOOL] });
  const synths = fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name);
  assert.deepEqual(synths, ["codex"]);
  assert.ok(log.progress.includes("claude does not synthesize: its upstream failed in this turn"));
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/a" } });
});

Deno.test("synthesizer: agent 0 whose child failed after a failed retry of its upstream does not synthesize", async () => {
  const { fake, turn } = council(
    {},
    byAgent({
      // Within maxUpstreamRetries, so not cut: it ends failed on its own (an HTTP member's one
      // retry failing too).
      "claude:child": {
        ok: false,
        error: "claude: HTTP 529: Overloaded",
        retries: [{ attempt: 1 }],
      },
      "claude:synth": { ok: false, error: "claude: HTTP 529: Overloaded" },
      "*:child": { text: "fine" },
      "*:synth": { text: "combined" },
    }),
  );
  const log = await turn();
  const synths = fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name);
  assert.deepEqual(synths, ["codex"], "claude is not asked again while its upstream is down");
  assert.ok(log.progress.includes("claude does not synthesize: its upstream failed in this turn"));
});

Deno.test("synthesizer: agent 0 whose child failed otherwise (no retry) still synthesizes first", async () => {
  const { fake, turn } = council(
    {},
    byAgent({
      "claude:child": { ok: false, error: "claude: exit 1" },
      "*:child": { text: "fine" },
      "*:synth": { text: "combined" },
    }),
  );
  await turn();
  const synths = fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name);
  assert.deepEqual(synths, ["claude"]);
});

Deno.test("health: AgentHealth keeps no record of agents that never failed", () => {
  const health = new AgentHealth({ failures: 2, cooldownMs: 1000 }, new FakeClock());
  health.record("claude", { kind: "ok" });
  health.record("codex", { kind: "neutral" });
  assert.deepEqual(health.status(), []);
  health.record("codex", { kind: "failed", reason: "x" });
  assert.deepEqual(health.status().map((s) => s.agent), ["codex"]);
});

Deno.test("health: misses are counted apart and never become failures; a failure makes a suspect once", () => {
  const clock = new FakeClock();
  const health = new AgentHealth({ failures: 3, cooldownMs: 1000 }, clock);
  for (let i = 0; i < 5; i++) {
    health.record("gemini", { kind: "missed", reason: "gemini: cut off" });
  }
  assert.deepEqual(health.status(), [{
    agent: "gemini",
    state: "healthy",
    failuresInRow: 0,
    missesInRow: 5,
  }], "five misses are no failure");
  assert.equal(health.suspect("gemini"), false);
  health.record("gemini", { kind: "ok" });
  assert.deepEqual(health.status(), [], "an answer clears them");

  health.record("codex", { kind: "failed", reason: "codex: exit 1" });
  assert.equal(health.suspect("codex"), true, "its last call failed");
  health.record("codex", { kind: "neutral" });
  assert.equal(health.suspect("codex"), true, "a cancelled call tells nothing");
  health.record("codex", { kind: "missed", reason: "codex: cut off" });
  assert.equal(health.suspect("codex"), false, "cut once without grace: the next call gets one");
  assert.equal(health.statusOf("codex").failuresInRow, 1);
  health.record("codex", { kind: "failed", reason: "codex: exit 1" });
  health.record("codex", { kind: "failed", reason: "codex: exit 1" });
  assert.equal(health.statusOf("codex").state, "cooling-down");
  assert.equal(health.suspect("codex"), false, "after the cool-down: a fair chance");
  clock.advance(1000);
  assert.equal(health.statusOf("codex").state, "failing");
  assert.equal(health.suspect("codex"), false);
});

function read(path: string): string {
  return JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });
}

Deno.test("synthesizer: agent 0 cut off unanswered after a failed call does not synthesize", async () => {
  let claudeChildren = 0;
  let claudeSynths = 0;
  const { fake, turn } = council(
    { health: { failures: 5, cooldownMs: 60_000 } },
    byAgent({
      "claude:child": () =>
        ++claudeChildren === 1 ? { ok: false, error: "claude: exit 1: 529" } : { hang: true },
      "claude:synth": () => (++claudeSynths, { ok: false, error: "claude: exit 1: 529" }),
      "*:child": { text: "fine" },
      "*:synth": { text: "combined" },
    }),
  );
  await turn();
  fake.calls.length = 0;
  const log = await turn();
  const synths = fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name);
  assert.deepEqual(synths, ["codex"]);
  assert.ok(
    log.progress.includes("claude does not synthesize: it failed before and did not answer now"),
    log.progress.join("\n"),
  );
  assert.equal(claudeSynths, 1, "claude synthesized (and failed) only in the first turn");
});
