import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import { createCouncil, type TurnRecord } from "../../src/council/turn/turn.ts";
import { sessionCap, SessionStore } from "../../src/council/session.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  gate,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../support/scripted_agents.ts";

function councilWith(file: Parameters<typeof testConfig>[0]) {
  const fake = fakeAgents(byAgent({
    "*:child": { text: "c", usage: { costUsd: 0.25 } },
    "*:synth": { text: "s", usage: { costUsd: 0.25 } },
  }));
  const council = createCouncil({
    config: testConfig({ fanOutPolicy: "never", ...file }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  return { ...council, fake };
}

Deno.test("session: turns counted; at maxTurns a canned stop answer, no council runs", async () => {
  const { runTurn, sessions, fake } = councilWith({ maxTurns: 2 });
  const request = () => testRequest({ sessionKey: "k1" });
  for (let i = 0; i < 2; i++) await collect(runTurn(request(), new AbortController().signal));
  assert.equal(fake.calls.length, 2);
  const capped = await collect(runTurn(request(), new AbortController().signal));
  assert.equal(fake.calls.length, 2, "no agent ran");
  assert.equal(capped.outcome.kind, "answer");
  const text = capped.outcome.kind === "answer" ? capped.outcome.text : "";
  assert.match(text, /turn limit \(2 of maxTurns 2\)/);
  assert.match(text, /raise `maxTurns`/);
  assert.equal(capped.usage.calls, 0);
  assert.deepEqual(sessions.peek("k1"), { key: "k1", turns: 2, usd: 0.5 });
  // Another conversation is unaffected.
  await collect(runTurn(testRequest({ sessionKey: "k2" }), new AbortController().signal));
  assert.equal(fake.calls.length, 3);
});

Deno.test("session: maxSessionUsd stops a session once its spend reaches the cap", async () => {
  const { runTurn, fake } = councilWith({ maxSessionUsd: 0.5 });
  const request = () => testRequest({ sessionKey: "spender" });
  await collect(runTurn(request(), new AbortController().signal));
  await collect(runTurn(request(), new AbortController().signal));
  const capped = await collect(runTurn(request(), new AbortController().signal));
  assert.equal(fake.calls.length, 2);
  const text = capped.outcome.kind === "answer" ? capped.outcome.text : "";
  assert.match(text, /spent \$0\.5000.*maxSessionUsd \$0\.5000/s);
  assert.match(text, /raise `maxSessionUsd`/);
});

Deno.test("session: a pre-filled store (ledger rebuild) is honoured", async () => {
  const sessions = new SessionStore(10);
  sessions.restore({ key: "old", turns: 5, usd: 1 });
  const fake = fakeAgents(() => ({ text: "x" }));
  const { runTurn } = createCouncil({
    config: testConfig({ maxTurns: 5 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    sessions,
  });
  const log = await collect(
    runTurn(testRequest({ sessionKey: "old" }), new AbortController().signal),
  );
  assert.equal(fake.calls.length, 0);
  assert.match(log.outcome.kind === "answer" ? log.outcome.text : "", /maxTurns 5/);
});

Deno.test("session store: LRU eviction beyond capacity; use refreshes recency", () => {
  const store = new SessionStore(2);
  const limits = { maxTurns: 10, maxSessionUsd: 0 };
  const run = (key: string, usd = 0) => {
    const admission = store.admit(key, limits);
    assert.equal(admission.kind, "run");
    if (admission.kind === "run") return store.settle(admission.ticket, usd).usd;
  };
  run("a");
  run("b");
  store.touch("a");
  run("c");
  assert.equal(store.size, 2);
  assert.equal(store.peek("b"), undefined, "least recently used evicted");
  assert.deepEqual(store.entries().map((s) => s.key), ["a", "c"]);
  assert.equal(run("a", 0.1), 0.1);
  assert.equal(run("a", 0.2), 0.30000000000000004);
  assert.throws(() => new SessionStore(0), RangeError);
});

Deno.test("session cap: turns first, spend only when a cap is set", () => {
  const limits = { maxTurns: 3, maxSessionUsd: 0 };
  assert.equal(sessionCap({ key: "k", turns: 2, usd: 100 }, limits), undefined);
  assert.equal(sessionCap({ key: "k", turns: 3, usd: 0 }, limits)?.kind, "turns");
  assert.equal(
    sessionCap({ key: "k", turns: 0, usd: 2 }, { ...limits, maxSessionUsd: 2 })?.kind,
    "spend",
  );
});

Deno.test("session: onTurnEnd receives each turn's usage and the session's running totals", async () => {
  const records: TurnRecord[] = [];
  const fake = fakeAgents(() => ({ text: "x", usage: { costUsd: 0.125 } }));
  const { runTurn } = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxTurns: 2 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    onTurnEnd: (record) => records.push(record),
  });
  for (let i = 0; i < 3; i++) {
    await collect(runTurn(testRequest({ sessionKey: "ledger" }), new AbortController().signal));
  }
  assert.deepEqual(
    records.map((r) => [r.sessionKey, r.sessionTurns, r.sessionUsd, r.usage.calls, r.outcomeKind]),
    [["ledger", 1, 0.125, 1, "answer"], ["ledger", 2, 0.25, 1, "answer"], [
      "ledger",
      2,
      0.25,
      0,
      "answer",
    ]],
  );
});

/** Lets every pending promise callback run (fake agents settle through microtasks). */
async function drain(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("session: 20 concurrent turns of one session keep to maxSessionUsd (reserve, then settle)", async () => {
  const open = gate();
  const fake = fakeAgents(() => ({
    text: "spent",
    usage: { costUsd: 0.0123 },
    gate: open.promise,
  }));
  const { runTurn } = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxSessionUsd: 0.02 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  const turns = Array.from(
    { length: 20 },
    () =>
      new TurnWatcher(runTurn(testRequest({ sessionKey: "one" }), new AbortController().signal)),
  );
  await drain();
  // No turn has settled yet, so nothing says what a turn costs: one runs, the others wait.
  assert.equal(fake.active, 1);
  assert.ok(
    turns.slice(1).every((t) => t.progress.some((l) => /^waiting for 1 running turn/.test(l))),
  );
  open.open();
  const logs = await Promise.all(turns.map((t) => t.finished));
  const spent = logs.reduce((total, log) => total + log.usage.usd, 0);
  // The cap is checked before a turn, so it can be passed by one turn, never by more.
  assert.equal(fake.calls.length, 2);
  assert.ok(spent <= 0.02 + 0.0123 + 1e-9, `spent $${spent}`);
  const capped = logs.filter((log) => /maxSessionUsd/.test((log.outcome as { text: string }).text));
  assert.equal(capped.length, 18);
});

Deno.test("session: concurrent turns run side by side while the reservations fit under the cap", async () => {
  const open = gate();
  const fake = fakeAgents(() => ({ text: "ok", usage: { costUsd: 0.01 }, gate: open.promise }));
  const { runTurn, sessions } = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxSessionUsd: 0.1 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  open.open();
  await collect(runTurn(testRequest({ sessionKey: "s" }), new AbortController().signal));
  const held = gate();
  const slow = fakeAgents(() => ({ text: "ok", usage: { costUsd: 0.01 }, gate: held.promise }));
  const { runTurn: runSlow } = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxSessionUsd: 0.1 }),
    runAgent: slow.runAgent,
    clock: new FakeClock(),
    sessions,
  });
  const turns = Array.from(
    { length: 12 },
    () => collect(runSlow(testRequest({ sessionKey: "s" }), new AbortController().signal)),
  );
  await drain();
  // $0.01 spent, a turn costs about $0.01: nine fit under $0.10 at once; the rest wait.
  assert.equal(slow.active, 9);
  held.open();
  await Promise.all(turns);
  assert.equal(slow.calls.length, 9, "the three that waited found the session at its cap");
  assert.ok(sessions.peek("s")!.usd <= 0.1 + 0.01 + 1e-9);
});

Deno.test("session: without a spend cap concurrent turns never wait; the turn cap holds exactly", async () => {
  const open = gate();
  const fake = fakeAgents(() => ({ text: "ok", gate: open.promise }));
  const { runTurn } = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxTurns: 3 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  const turns = Array.from(
    { length: 10 },
    () => collect(runTurn(testRequest({ sessionKey: "t" }), new AbortController().signal)),
  );
  await drain();
  assert.equal(fake.active, 3);
  open.open();
  const logs = await Promise.all(turns);
  assert.equal(fake.calls.length, 3);
  assert.equal(
    logs.filter((l) => /maxTurns 3/.test((l.outcome as { text: string }).text)).length,
    7,
  );
});

Deno.test("session: a turn waiting for room under the cap ends at once when cancelled", async () => {
  const open = gate();
  const fake = fakeAgents(() => ({ text: "ok", usage: { costUsd: 0.01 }, gate: open.promise }));
  const { runTurn, sessions } = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxSessionUsd: 1 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  const first = collect(runTurn(testRequest({ sessionKey: "w" }), new AbortController().signal));
  const stop = new AbortController();
  const waiting = new TurnWatcher(runTurn(testRequest({ sessionKey: "w" }), stop.signal));
  await waiting.progressMatching(/^waiting for 1 running turn/);
  stop.abort();
  const cancelled = await waiting.finished;
  assert.match((cancelled.outcome as { text: string }).text, /cancelled/);
  open.open();
  await first;
  assert.equal(fake.calls.length, 1);
  assert.deepEqual(
    sessions.peek("w"),
    { key: "w", turns: 1, usd: 0.01 },
    "the cancelled one never counted",
  );
});

Deno.test("session store: admit reserves, settle books the spend and wakes waiters; running sessions are never evicted", async () => {
  const store = new SessionStore(1);
  const limits = { maxTurns: 10, maxSessionUsd: 1 };
  const first = store.admit("a", limits);
  assert.equal(first.kind, "run");
  const second = store.admit("a", limits);
  assert.equal(second.kind, "wait", "no turn has settled: the first reserves the whole remainder");
  store.admit("b", { maxTurns: 10, maxSessionUsd: 0 });
  assert.deepEqual(store.peek("a"), { key: "a", turns: 1, usd: 0 }, "a runs: b evicted nothing");
  assert.equal(store.size, 2);
  if (first.kind !== "run" || second.kind !== "wait") return;
  let woken = false;
  second.settled.then(() => (woken = true));
  store.settle(first.ticket, 0.25);
  await Promise.resolve();
  assert.ok(woken);
  assert.deepEqual(store.peek("a"), { key: "a", turns: 1, usd: 0.25 });
  // Now a turn is known to cost $0.25: three more fit under $1, the fourth waits.
  const next = [1, 2, 3, 4].map(() => store.admit("a", limits).kind);
  assert.deepEqual(next, ["run", "run", "run", "wait"]);
  assert.equal(store.running("a"), 3);
});
