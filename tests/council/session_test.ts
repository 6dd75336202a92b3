import assert from "node:assert/strict";
import { FakeClock } from "../../src/clock.ts";
import { createCouncil, type TurnRecord } from "../../src/council/turn.ts";
import { sessionCap, SessionStore } from "../../src/council/session.ts";
import { byAgent, collect, fakeAgents, testConfig, testRequest } from "./helpers.ts";

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
  store.startTurn("a");
  store.startTurn("b");
  store.touch("a");
  store.startTurn("c");
  assert.equal(store.size, 2);
  assert.equal(store.peek("b"), undefined, "least recently used evicted");
  assert.deepEqual(store.entries().map((s) => s.key), ["a", "c"]);
  assert.equal(store.addSpend("a", 0.1), 0.1);
  assert.equal(store.addSpend("a", 0.2), 0.30000000000000004);
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
