/**
 * The status store as the council's observer: live turns with each call's state, elapsed time,
 * tokens and cost; recent turns; per-agent figures; spend; one session's view.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import { createCouncil } from "../../src/council/turn/turn.ts";
import type { TurnObserver } from "../../src/council/observer.ts";
import type { CallRecord, TurnRecord } from "../../src/council/records.ts";
import { RECENT_TURNS, StatusStore } from "../../src/status/store.ts";
import { hostSessionKey, sessionKeysFor } from "../../src/status/session_lookup.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  gate,
  READ_TOOL,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../support/scripted_agents.ts";
import { eventually, within } from "../support/wait.ts";

const INFO = { version: "9.9.9", startedAt: 1_700_000_000_000, configPath: "/etc/council.yaml" };

Deno.test("status store: a running turn shows the decision and per call its state, elapsed time, tokens and cost", async () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  const codexGate = gate();
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "claude's answer", usage: { costUsd: 0.02 } },
    "codex:child": {
      early: ["partial"],
      earlyUsage: { inputTokens: 1200, outputTokens: 300 },
      gate: codexGate.promise,
      text: "codex's answer",
    },
    "gemini:child": { ok: false, error: "gemini: exit 41" },
    "claude:synth": { text: "combined" },
  }));
  const council = createCouncil({
    config: testConfig(),
    runAgent: fake.runAgent,
    clock,
    observer: store,
  });
  const watcher = new TurnWatcher(
    council.runTurn(testRequest({ sessionKey: "s-live" }), new AbortController().signal),
  );
  await within(
    eventually(() => store.live()[0]?.calls.filter((c) => c.state !== "running").length === 2, ""),
    "claude and gemini to end",
  );
  clock.advance(7_000);
  const [turn] = store.live();
  assert.equal(turn.session, "s-live");
  assert.equal(turn.kind, "answer");
  assert.equal(turn.decision?.kind, "fanout");
  assert.deepEqual(turn.decision?.agents, ["claude", "codex", "gemini"]);
  assert.equal(turn.elapsedMs, 7_000);
  const call = (label: string) => turn.calls.find((c) => c.label === label)!;
  assert.equal(call("claude").state, "done");
  assert.equal(call("claude").costUsd, 0.02);
  assert.equal(call("gemini").state, "failed");
  assert.equal(call("codex").state, "running");
  assert.equal(call("codex").elapsedMs, 7_000);
  assert.equal(call("codex").tokens, 1500, "the reported counters, not the text estimate");
  assert.equal(turn.usd, 0.02 + 0.01, "the ended calls' cost so far");
  assert.deepEqual(store.document(INFO).recent, []);

  codexGate.open();
  const log = await within(watcher.finished, "the turn");
  assert.deepEqual(store.live(), []);
  const [recent] = store.document(INFO).recent;
  assert.equal(recent.turn, turn.turn);
  assert.equal(recent.outcome, "answer");
  assert.equal(recent.usd, log.usage.usd);
  assert.deepEqual(recent.calls.map((c) => [c.label, c.state]), [
    ["claude", "done"],
    ["gemini", "failed"],
    ["codex", "done"],
    ["claude (synth)", "done"],
  ]);
});

Deno.test("status store: text-only calls count estimated tokens; activity shows what a child does", () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  store.turnStarted({
    turnId: "t1",
    sessionKey: "s",
    model: "m",
    kind: "action",
    continuation: false,
    startedAt: clock.now(),
  });
  const call = store.callStarted("t1", {
    label: "gemini",
    agent: "gemini",
    role: "child",
    model: "g",
    startedAt: clock.now(),
  });
  call.event({ type: "text", agent: "gemini", text: "x".repeat(41) });
  call.event({ type: "activity", agent: "gemini", text: "Read\nnotes.txt" });
  const [status] = store.live()[0].calls;
  assert.equal(status.tokens, 11);
  assert.equal(status.estimated, true);
  assert.equal(status.activity, "Read notes.txt");
});

function record(turnId: string, overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    turnId,
    sessionKey: "s",
    usage: { inputTokens: 10, outputTokens: 5, usd: 0.5, calls: 1, wallMs: 1000 },
    sessionTurns: 1,
    sessionUsd: 0.5,
    outcomeKind: "answer",
    endedAt: 1_700_000_000_000,
    counted: true,
    decision: { kind: "single", reason: "r", agents: ["claude"] },
    calls: [],
    failed: false,
    cancelled: false,
    ...overrides,
  };
}

Deno.test("status store: the last 50 finished turns, newest first", () => {
  const store = new StatusStore(new FakeClock());
  for (let i = 0; i < RECENT_TURNS + 5; i++) store.turnEnded(record(`t${i}`));
  const recent = store.document(INFO).recent;
  assert.equal(recent.length, RECENT_TURNS);
  assert.equal(recent[0].turn, `t${RECENT_TURNS + 4}`);
  assert.equal(recent.at(-1)!.turn, "t5");
});

function callRecord(agent: string, durationMs: number, more: Partial<CallRecord> = {}): CallRecord {
  return {
    label: agent,
    agent,
    model: "m",
    role: "child",
    ok: true,
    timedOut: false,
    aborted: false,
    exitCode: 0,
    durationMs,
    usage: { inputTokens: 1, outputTokens: 2, costUsd: 0.25, estimated: false },
    ...more,
  };
}

Deno.test("status store: per-agent calls, failures (not cancellations), median latency", () => {
  const store = new StatusStore(new FakeClock());
  store.knowAgents(["claude", "gemini"]);
  const end = (record: CallRecord) =>
    store.callStarted("none", { ...record, startedAt: 0 }).ended(record);
  end(callRecord("claude", 4000));
  end(callRecord("claude", 1000));
  end(callRecord("claude", 9000, { ok: false, exitCode: 1 }));
  end(callRecord("claude", 2000, { ok: false, timedOut: true }));
  end(callRecord("claude", 100, { ok: false, aborted: true }));
  const agents = store.document(INFO).agents;
  assert.deepEqual(agents.map((a) => a.agent), ["claude", "gemini"]);
  const claude = agents[0];
  assert.equal(claude.calls, 5);
  assert.equal(claude.failures, 2);
  assert.equal(claude.cancelled, 1);
  assert.equal(
    claude.medianMs,
    3000,
    "median of 1000, 2000, 4000, 9000 (the cancelled call left out)",
  );
  assert.equal(claude.usd, 1.25);
  assert.equal(agents[1].calls, 0);
  assert.equal(agents[1].medianMs, null);
});

Deno.test("status store: how often the synthesizer chose each agent's proposal", async () => {
  const store = new StatusStore(new FakeClock());
  const read = (path: string) =>
    JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });
  const fake = fakeAgents(byAgent({
    "claude:child": { text: read("/a") },
    "codex:child": { text: read("/b") },
    "gemini:child": { text: read("/b") },
    "claude:synth": { text: '{"choose": 2}' },
  }));
  const council = createCouncil({
    config: testConfig(),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    observer: store,
  });
  const log = await collect(
    council.runTurn(testRequest({ tools: [READ_TOOL] }), new AbortController().signal),
  );
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/b" } });
  const figures = Object.fromEntries(
    store.document(INFO).agents.map((a) => [a.agent, [a.chosen, a.candidates]]),
  );
  assert.deepEqual(figures, { claude: [0, 1], codex: [1, 1], gemini: [1, 1] });
});

Deno.test("status store: spend since start and per minute", () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 24, 10, 0, 30));
  const store = new StatusStore(clock);
  store.turnEnded(record("a", { endedAt: clock.now() }));
  store.turnEnded(record("b", { endedAt: clock.now() + 10_000 }));
  store.turnEnded(record("c", { endedAt: clock.now() + 60_000 }));
  clock.advance(25 * 3600_000);
  store.turnEnded(record("d", { endedAt: clock.now() }));
  const spend = store.document(INFO).spend;
  assert.equal(spend.usd, 2);
  assert.equal(spend.turns, 4);
  assert.deepEqual(spend.perMinute, [
    { minute: "2026-11-25T11:00:00.000Z", usd: 0.5, turns: 1 },
  ], "minutes older than a day are dropped");
  const early = new StatusStore(new FakeClock(Date.UTC(2026, 10, 24, 10, 2)));
  early.turnEnded(record("a", { endedAt: Date.UTC(2026, 10, 24, 10, 0, 30) }));
  early.turnEnded(record("b", { endedAt: Date.UTC(2026, 10, 24, 10, 0, 40) }));
  early.turnEnded(record("c", { endedAt: Date.UTC(2026, 10, 24, 10, 1, 5) }));
  assert.deepEqual(early.document(INFO).spend.perMinute, [
    { minute: "2026-11-24T10:00:00.000Z", usd: 1, turns: 2 },
    { minute: "2026-11-24T10:01:00.000Z", usd: 0.5, turns: 1 },
  ]);
});

Deno.test("status store: one session's live turn, last turn and totals; unknown sessions are null", () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  store.turnEnded(record("old", { sessionKey: "k", sessionTurns: 3, sessionUsd: 1.5 }));
  store.turnStarted({
    turnId: "now",
    sessionKey: "k",
    model: "m",
    kind: "answer",
    continuation: true,
    startedAt: clock.now(),
  });
  const session = store.session("k")!;
  assert.equal(session.live?.turn, "now");
  assert.equal(session.last?.turn, "old");
  assert.equal(session.turns, 4, "the live turn counts");
  assert.equal(session.usd, 1.5);
  assert.equal(store.session("other"), null);
  assert.equal(store.document(INFO, "other").session, null);
  assert.equal(store.document(INFO, "k").session?.live?.turn, "now");
  assert.equal(store.document(INFO).session, undefined);
});

Deno.test("status: a host's session id names the session the council keys by it", async () => {
  const key = await hostSessionKey("8f2c-uuid");
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.notEqual(key, await hostSessionKey("other"));
  assert.deepEqual(await sessionKeysFor("8f2c-uuid"), ["8f2c-uuid", key]);
});

Deno.test("status store: an observer that throws never breaks a turn", async () => {
  const boom = () => {
    throw new Error("observer bug");
  };
  const observer: TurnObserver = {
    turnStarted: boom,
    turnDecided: boom,
    callStarted: boom,
    synthesizerChose: boom,
    turnEnded: boom,
  };
  const fake = fakeAgents(byAgent({ "*": { text: "fine" } }));
  const council = createCouncil({
    config: testConfig({ fanOutPolicy: "never" }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    observer,
  });
  const log = await collect(council.runTurn(testRequest(), new AbortController().signal));
  assert.deepEqual(log.outcome, { kind: "answer", text: "fine" });
});

Deno.test("status store: a turn's decision says whether the synthesizer picked or wrote", async () => {
  const store = new StatusStore(new FakeClock());
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "ALPHA" },
    "codex:child": { text: "BRAVO" },
    "gemini:child": { text: "CHARLIE" },
    "claude:synth": { text: '{"choose": "A"}' },
  }));
  const council = createCouncil({
    config: testConfig(),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    random: () => 0,
    observer: store,
  });
  await collect(council.runTurn(testRequest(), new AbortController().signal));
  const [turn] = store.document(INFO).recent;
  assert.deepEqual(turn.decision?.synthesis, {
    kind: "picked",
    agent: "claude",
    picked: "codex",
    candidates: 3,
  });
  // The agents table counts the pick as it counts a chosen proposal.
  const figures = Object.fromEntries(
    store.document(INFO).agents.map((a) => [a.agent, [a.candidates, a.chosen]]),
  );
  assert.deepEqual(figures, { claude: [1, 0], codex: [1, 1], gemini: [1, 0] });
});
