/**
 * No slow first turn of an outage: each agent's grace behind the quorum is learned from its
 * usual lateness (kept in a store across gateway runs), and a child whose upstream is failing
 * while the quorum is in is cut at once (a fake clock; nothing sleeps).
 */
import assert from "node:assert/strict";
import {
  graceFrom,
  Lateness,
  type LatenessHistory,
  MIN_GRACE_MS,
  parseHistory,
} from "../../../src/council/calls/lateness.ts";
import type { AgentEvent } from "../../../src/agents/types.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { FakeClock } from "../../support/fake_clock.ts";
import {
  byAgent,
  fakeAgents,
  type FakeCall,
  gate,
  recordingCouncil,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";

const SETTINGS = { defaultMs: 3000, maxMs: 10_000 };

Deno.test("lateness: a new agent gets the default; then a high percentile × margin, clamped", () => {
  assert.equal(graceFrom([], SETTINGS), 3000);
  assert.equal(graceFrom([400, 400], SETTINGS), 3000, "too little history");
  assert.equal(graceFrom([0, 0, 0, 0], SETTINGS), MIN_GRACE_MS, "punctual: the floor");
  // Ten samples: the 90th percentile is the ninth smallest (2000), × 1.5.
  const samples = [100, 200, 300, 400, 500, 600, 700, 800, 2000, 9000];
  assert.equal(graceFrom(samples, SETTINGS), 3000);
  assert.equal(graceFrom([8000, 9000, 9500], SETTINGS), 10_000, "clamped to the most");
  assert.deepEqual(parseHistory({ a: [1, -2, "x", 3], b: "no", c: [] }), { a: [1, 3] });
  assert.deepEqual(parseHistory(null), {});
});

Deno.test("lateness: a missed grace makes the next one the longest; an answer's lateness bounds the next", () => {
  const lateness = new Lateness(SETTINGS);
  lateness.missed("gemini", 3000);
  assert.equal(lateness.graceFor("gemini"), 10_000, "after a miss: the longest");
  assert.equal(lateness.longestMs, 10_000);
  lateness.record("gemini", 4000);
  assert.equal(lateness.graceFor("gemini"), 6000, "too little history: its latest lateness × 1.5");
  lateness.record("gemini", 1000);
  // History [3000, 4000, 1000]: its high percentile, 4000 × 1.5 = 6000, over 1000 × 1.5.
  assert.equal(lateness.graceFor("gemini"), 6000);
  assert.deepEqual(lateness.history(), { gemini: [3000, 4000, 1000] }, "a miss is a sample");
  const fresh = new Lateness(SETTINGS);
  fresh.record("codex", 2500);
  assert.equal(fresh.graceFor("codex"), 3750, "its latest lateness × 1.5 over the default");
});

Deno.test("lateness: a cut without grace makes the next grace the longest and learns no lateness", () => {
  const lateness = new Lateness(SETTINGS);
  for (let i = 0; i < 3; i++) lateness.record("gemini", 0);
  assert.equal(lateness.graceFor("gemini"), MIN_GRACE_MS);
  lateness.cutWithoutGrace("gemini");
  assert.equal(lateness.graceFor("gemini"), 10_000);
  assert.deepEqual(lateness.history(), { gemini: [0, 0, 0] }, "no sample");
});

/** A store in memory, as the gateway keeps one in the state directory. */
function memoryStore(initial: LatenessHistory = {}) {
  const saved: LatenessHistory[] = [];
  return { saved, store: { load: () => initial, save: (h: LatenessHistory) => saved.push(h) } };
}

/** gemini answers `lateMs` behind the other two (a fake clock moved by the test). */
async function lateTurn(
  c: ReturnType<typeof councilWith>,
  lateMs: number,
): Promise<string[]> {
  const release = gate();
  c.geminiGate = release.promise;
  const watcher = new TurnWatcher(c.runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum: 2 of 3 answers in/);
  c.clock.advance(lateMs);
  release.open();
  const log = await watcher.finished;
  return log.progress;
}

function councilWith(file: Parameters<typeof testConfig>[0], history: LatenessHistory = {}) {
  const { store, saved } = memoryStore(history);
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "ALPHA" },
    "codex:child": { text: "BRAVO" },
    "gemini:child": () => ({ text: "CHARLIE", gate: c.geminiGate }),
    "claude:synth": { text: "combined" },
  }));
  const clock = new FakeClock();
  const council = createCouncil({
    config: testConfig({ heartbeatMs: 1e9, telemetryMs: 1e9, ...file }),
    runAgent: fake.runAgent,
    clock,
    random: () => 0,
    latenessStore: store,
  });
  const c = { ...council, clock, fake, saved, geminiGate: undefined as Promise<void> | undefined };
  return c;
}

Deno.test("learned grace: an agent usually a second late is given its own bound, not the default", async () => {
  const c = councilWith({ quorum: { minAnswers: 2, graceMs: 5000 } });
  const first = await lateTurn(c, 1000);
  assert.ok(first.includes("quorum: 2 of 3 answers in — gemini gets 5.0s more"), first.join("\n"));
  await lateTurn(c, 1000);
  await lateTurn(c, 1000);
  // Three samples of 1000 ms: 1.5 s.
  const fourth = await lateTurn(c, 1000);
  assert.ok(
    fourth.includes("quorum: 2 of 3 answers in — gemini gets 1.5s more"),
    fourth.join("\n"),
  );
  assert.deepEqual(c.saved.at(-1)?.gemini, [1000, 1000, 1000, 1000], "kept in the store");
  assert.deepEqual(c.saved.at(-1)?.claude, [0, 0, 0, 0], "in before the quorum: on time");
  assert.equal(c.clock.pending, 0);
});

Deno.test("learned grace: a gateway starts from the stored history; a hanging child is cut at its bound", async () => {
  const c = councilWith({ quorum: { minAnswers: 2, graceMs: 5000 } }, {
    gemini: [200, 400, 600],
  });
  c.geminiGate = new Promise(() => {}); // hangs
  const watcher = new TurnWatcher(c.runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum: 2 of 3 answers in — gemini gets 1\.0s more$/);
  c.clock.advance(999);
  assert.ok(!watcher.progress.some((l) => l.startsWith("gemini cut off")));
  c.clock.advance(1);
  const log = await watcher.finished;
  assert.ok(
    log.progress.some((l) => l.startsWith("gemini cut off after")),
    log.progress.join("\n"),
  );
  assert.deepEqual(log.outcome, { kind: "answer", text: "combined" });
  // Cut at its grace's end: at least that late, which its history keeps.
  assert.deepEqual(c.saved.at(-1)?.gemini, [200, 400, 600, 1000]);
});

/** A child whose script hands the test its event sink, to announce retries and text later. */
function controlled(sink: { emit?: (event: AgentEvent) => void }, release: Promise<void>) {
  return (call: FakeCall) => {
    sink.emit = (event) => call.options.onEvent?.(event);
    return { text: "BRAVO late", gate: release };
  };
}

Deno.test("upstream-failure cut: a child retrying a failing upstream when the quorum comes is cut at once", async () => {
  const { runTurn, records, clock } = recordingCouncil(
    { quorum: { minAnswers: 2, graceMs: 5000 } },
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": { retries: [{ attempt: 1, reason: "HTTP 529 overloaded" }], hang: true },
      "gemini:child": { text: "CHARLIE" },
      "claude:synth": { text: "combined" },
    }),
  );
  const startedAt = clock.now();
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  const log = await watcher.finished;
  assert.ok(
    log.progress.includes(
      "quorum: 2 of 3 answers in — not waiting for codex: its upstream is failing",
    ),
    log.progress.join("\n"),
  );
  assert.equal(clock.now(), startedAt, "no grace was waited");
  const codex = records[0].calls.find((c) => c.label === "codex")!;
  assert.equal(codex.cutOff, "quorum");
  assert.equal(codex.ok, false);
  assert.deepEqual(log.outcome, { kind: "answer", text: "combined" });
});

Deno.test("upstream-failure cut: a retry announced during the grace ends the wait for it at once", async () => {
  const sink: { emit?: (event: AgentEvent) => void } = {};
  const { runTurn, records, agentHealth } = recordingCouncil(
    { quorum: { minAnswers: 2, graceMs: 5000 } },
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": controlled(sink, new Promise(() => {})),
      "gemini:child": { text: "CHARLIE" },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/gets 5\.0s more$/);
  sink.emit!({ type: "retry", agent: "codex", attempt: 1, reason: "503 Service Unavailable" });
  const log = await watcher.finished;
  assert.ok(log.progress.some((l) => l.endsWith("not waiting for codex: its upstream is failing")));
  assert.equal(records[0].calls.find((c) => c.label === "codex")?.cutOff, "quorum");
  // Its upstream said it is failing: a failure (unlike a grace missed in silence), named by it.
  const codex = agentHealth().find((s) => s.agent === "codex");
  assert.equal(codex?.state, "failing");
  assert.equal(codex?.failuresInRow, 1);
  assert.match(codex?.lastError ?? "", /its upstream was failing: 503 Service Unavailable$/);
});

Deno.test("upstream-failure cut: a child whose retries healed before the quorum gets its grace, and its answer counts", async () => {
  const sink: { emit?: (event: AgentEvent) => void } = {};
  const release = gate();
  const geminiGate = gate();
  const { runTurn, fake, records, agentHealth } = recordingCouncil(
    { quorum: { minAnswers: 2, graceMs: 5000 } },
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": controlled(sink, release.promise),
      "gemini:child": { text: "CHARLIE", gate: geminiGate.promise },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^claude: done/);
  // It retried, then its answer started coming: healed before the quorum.
  sink.emit!({ type: "retry", agent: "codex", attempt: 1, reason: "429 rate limited" });
  sink.emit!({ type: "text", agent: "codex", text: "BRAVO" });
  geminiGate.open();
  await watcher.progressMatching(/— codex gets 5\.0s more$/);
  release.open();
  const log = await watcher.finished;
  assert.ok(
    !log.progress.some((l) => l.includes("its upstream is failing")),
    log.progress.join("\n"),
  );
  assert.equal(records[0].calls.find((c) => c.label === "codex")?.ok, true);
  assert.match(fake.calls.find((c) => c.role === "synth")!.prompt, /BRAVO late/);
  assert.equal(agentHealth().find((s) => s.agent === "codex")?.state, "healthy", "no failure");
});

Deno.test("upstream-failure cut: retries that heal before the quorum count as an answer", async () => {
  const { runTurn, fake, records, agentHealth } = recordingCouncil(
    { quorum: { minAnswers: 3, graceMs: 5000 } },
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": { retries: [{ attempt: 1, reason: "HTTP 500" }], text: "BRAVO healed" },
      "gemini:child": { text: "CHARLIE" },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.finished;
  assert.equal(records[0].calls.find((c) => c.label === "codex")?.ok, true);
  assert.match(fake.calls.find((c) => c.role === "synth")!.prompt, /BRAVO healed/);
  assert.equal(agentHealth().find((s) => s.agent === "codex")?.state, "healthy", "no failure");
});

Deno.test("upstream-failure cut: agent 0 cut for a failing upstream does not synthesize", async () => {
  const { runTurn, fake } = recordingCouncil(
    { quorum: { minAnswers: 2, graceMs: 5000 } },
    byAgent({
      "claude:child": { retries: [{ attempt: 1, reason: "529 overloaded" }], hang: true },
      "codex:child": { text: "BRAVO" },
      "gemini:child": { text: "CHARLIE" },
      "codex:synth": { text: "combined by codex" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  const log = await watcher.finished;
  assert.ok(log.progress.includes("claude does not synthesize: its upstream failed in this turn"));
  assert.deepEqual(fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name), [
    "codex",
  ]);
  assert.deepEqual(log.outcome, { kind: "answer", text: "combined by codex" });
});

Deno.test("upstream-failure cut: a child whose retries healed and then missed its grace only missed it", async () => {
  const sink: { emit?: (event: AgentEvent) => void } = {};
  const geminiGate = gate();
  const { runTurn, clock, agentHealth } = recordingCouncil(
    { quorum: { minAnswers: 2, graceMs: 5000 } },
    byAgent({
      "claude:child": { text: "ALPHA" },
      "codex:child": controlled(sink, new Promise(() => {})),
      "gemini:child": { text: "CHARLIE", gate: geminiGate.promise },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^claude: done/);
  sink.emit!({ type: "retry", agent: "codex", attempt: 1, reason: "429 rate limited" });
  sink.emit!({ type: "text", agent: "codex", text: "BRAVO, slowly" });
  geminiGate.open();
  await watcher.progressMatching(/— codex gets 5\.0s more$/);
  clock.advance(5000);
  const log = await watcher.finished;
  assert.ok(log.progress.some((l) => l.startsWith("codex cut off after")), log.progress.join("\n"));
  const codex = agentHealth().find((s) => s.agent === "codex");
  assert.deepEqual(codex, { agent: "codex", state: "healthy", failuresInRow: 0, missesInRow: 1 });
});
