/**
 * The turn ledger: what a line holds, append + read back, tolerant reading, and the session
 * counters rebuilt from it so a restart resets no cap.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../../src/clock.ts";
import { SessionStore } from "../../src/council/session.ts";
import { createCouncil, type TurnRecord } from "../../src/council/turn.ts";
import {
  appendEntry,
  type LedgerEntry,
  ledgerEntry,
  LedgerError,
  openLedger,
  readLedger,
  rebuildSessions,
} from "../../src/ledger.ts";
import { byAgent, collect, fakeAgents, testConfig, testRequest } from "../council/helpers.ts";

const never = new AbortController().signal;

/** A council whose turns are appended to the ledger at `path`, its sessions rebuilt from it. */
function councilOnLedger(
  path: string,
  file: Parameters<typeof testConfig>[0],
  script = fakeAgents(() => ({ text: "answer", usage: { costUsd: 0.25 } })),
) {
  const config = testConfig(file);
  const sessions = new SessionStore(config.sessionCapacity);
  const onTurnEnd = openLedger(path, sessions);
  return createCouncil({
    config,
    runAgent: script.runAgent,
    clock: new FakeClock(),
    sessions,
    onTurnEnd,
  });
}

function entries(path: string): LedgerEntry[] {
  const found: LedgerEntry[] = [];
  readLedger(path, (entry) => found.push(entry));
  return found;
}

Deno.test("ledger: a fanned-out turn's line holds decision, agents, every call and the totals", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "a", usage: { costUsd: 0.1, inputTokens: 10, outputTokens: 5 } },
    "codex:child": { ok: false, timedOut: true, error: "codex: timed out" },
    "gemini:child": { text: "b", usage: { costUsd: 0.2, inputTokens: 20, outputTokens: 6 } },
    "claude:synth": { text: "combined", usage: { costUsd: 0.3 } },
  }));
  const council = councilOnLedger(path, { fanOutPolicy: "always" }, fake);
  const turn = await collect(council.runTurn(testRequest({ sessionKey: "s1" }), never));
  assert.equal(turn.outcome.kind, "answer");

  const [line] = entries(path);
  assert.equal(line.v, 1);
  assert.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(line.session, "s1");
  assert.equal(line.sessionTurn, 1);
  assert.equal(line.sessionUsd, line.costUsd);
  assert.equal(line.counted, true);
  assert.equal(line.decision, "fanout");
  assert.equal(line.reason, "fanOutPolicy always");
  assert.deepEqual(line.agents, ["claude", "codex", "gemini"]);
  assert.deepEqual(
    line.calls.map((c) => [c.label, c.role, c.status, c.costUsd]),
    [
      ["claude", "child", "ok", 0.1],
      ["codex", "child", "timed-out", 0.01],
      ["gemini", "child", "ok", 0.2],
      ["claude (synth)", "synth", "ok", 0.3],
    ],
  );
  assert.equal(line.calls[0].inputTokens, 10);
  assert.equal(line.calls[0].outputTokens, 5);
  assert.equal(line.calls[0].durationMs, 1000);
  assert.equal(line.outcome, "answer");
  assert.equal(line.failed, false);
  assert.equal(line.cancelled, false);
  assert.ok(Math.abs(line.costUsd - 0.61) < 1e-9, String(line.costUsd));
  assert.equal(line.inputTokens, 10 + 100 + 20 + 100);
});

Deno.test("ledger: a capped turn is recorded but does not count; a cancelled one counts with its spend", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  const fake = fakeAgents(byAgent({
    "*:child": (call) => call.prompt.includes("HANG") ? { hang: true } : { text: "ok" },
  }));
  const council = councilOnLedger(path, { fanOutPolicy: "never", maxTurns: 2 }, fake);
  await collect(council.runTurn(testRequest({ sessionKey: "s" }), never));
  const stop = new AbortController();
  const cancelled = collect(
    council.runTurn(testRequest({ sessionKey: "s", ask: "HANG" }), stop.signal),
  );
  while (fake.active === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  stop.abort();
  await cancelled;
  await collect(council.runTurn(testRequest({ sessionKey: "s" }), never));

  const lines = entries(path);
  assert.deepEqual(
    lines.map((l) => [l.decision, l.counted, l.cancelled, l.sessionTurn, l.calls.length]),
    [
      ["single", true, false, 1, 1],
      ["single", true, true, 2, 1],
      ["capped", false, false, 2, 0],
    ],
  );
  assert.equal(lines[1].calls[0].status, "aborted");
});

Deno.test("ledger: append + read round trip; each line is whole JSON; the file is private", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  const record: TurnRecord = {
    turnId: "t1",
    sessionKey: "k".repeat(64),
    usage: { inputTokens: 3, outputTokens: 4, usd: 0.5, calls: 1, wallMs: 12.6 },
    sessionTurns: 7,
    sessionUsd: 2,
    outcomeKind: "tool",
    endedAt: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
    counted: true,
    decision: { kind: "single", reason: "fanOutPolicy never", agents: ["claude"] },
    calls: [{
      label: "claude",
      agent: "claude",
      model: "opus",
      role: "child",
      ok: false,
      timedOut: false,
      aborted: false,
      exitCode: 2,
      durationMs: 10.4,
      usage: { inputTokens: 3, outputTokens: 4, costUsd: 0.5, estimated: true },
    }],
    failed: true,
    cancelled: false,
  };
  appendEntry(path, ledgerEntry(record));
  appendEntry(path, ledgerEntry({ ...record, turnId: "t2" }));
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("\n").length, 3);
  assert.ok(text.endsWith("\n"));
  const [first, second] = entries(path);
  assert.equal(first.time, "2026-01-02T03:04:05.006Z");
  assert.equal(first.wallMs, 13);
  assert.equal(first.calls[0].status, "failed");
  assert.equal(first.calls[0].durationMs, 10);
  assert.equal(first.outcome, "tool");
  assert.equal(second.turn, "t2");
  if (Deno.build.os !== "windows") assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
});

Deno.test("ledger: reading skips torn, foreign and over-long lines and counts them; a missing file is empty", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  assert.deepEqual(readLedger(path, () => assert.fail("no entries")), { entries: 0, skipped: 0 });
  const good = (session: string, costUsd: number, counted = true) =>
    JSON.stringify({
      v: 1,
      time: "2026-01-01T00:00:00.000Z",
      turn: "t",
      session,
      sessionTurn: 1,
      sessionUsd: costUsd,
      counted,
      decision: counted ? "single" : "capped",
      reason: "r",
      agents: [],
      calls: [],
      outcome: "answer",
      failed: false,
      cancelled: false,
      wallMs: 1,
      inputTokens: 1,
      outputTokens: 1,
      costUsd,
    });
  await Deno.writeTextFile(
    path,
    [
      good("a", 1),
      "",
      "not json at all",
      JSON.stringify({ v: 99, session: "a" }),
      `{"pad":"${"x".repeat(2 * 1024 * 1024)}"}`,
      good("b", 0.5),
      good("a", 0.25),
      good("a", 0, false),
      good("b", 2).slice(0, 40), // torn by a crash mid-write: no newline, not JSON
    ].join("\n"),
  );
  const scan = readLedger(path, () => {});
  assert.equal(scan.entries, 4);
  assert.equal(scan.skipped, 4);
  assert.equal(scan.firstSkipped?.line, 3);
  assert.equal(scan.firstSkipped?.reason, "not JSON");

  const rebuilt = rebuildSessions(path);
  assert.deepEqual(rebuilt.sessions, [
    { key: "b", turns: 1, usd: 0.5 },
    { key: "a", turns: 2, usd: 1.25 },
  ]);
  assert.equal(rebuilt.turns, 3);
  assert.equal(rebuilt.usd, 1.75);
});

Deno.test("ledger: a restart keeps the turn cap and the spend cap (sessions rebuilt from the ledger)", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  const first = councilOnLedger(path, { fanOutPolicy: "never", maxTurns: 2, maxSessionUsd: 10 });
  await collect(first.runTurn(testRequest({ sessionKey: "turns" }), never));
  await collect(first.runTurn(testRequest({ sessionKey: "turns" }), never));
  await collect(first.runTurn(testRequest({ sessionKey: "spend" }), never));

  // "Restart": a new council over the same ledger, with a spend cap the session has now reached.
  const fake = fakeAgents(() => ({ text: "ran", usage: { costUsd: 0.25 } }));
  const second = councilOnLedger(
    path,
    { fanOutPolicy: "never", maxTurns: 2, maxSessionUsd: 0.25 },
    fake,
  );
  assert.deepEqual(second.sessions.peek("turns"), { key: "turns", turns: 2, usd: 0.5 });
  assert.deepEqual(second.sessions.peek("spend"), { key: "spend", turns: 1, usd: 0.25 });
  const capped = await collect(second.runTurn(testRequest({ sessionKey: "turns" }), never));
  assert.match((capped.outcome as { text: string }).text, /maxTurns/);
  const broke = await collect(second.runTurn(testRequest({ sessionKey: "spend" }), never));
  assert.match((broke.outcome as { text: string }).text, /maxSessionUsd/);
  assert.equal(fake.calls.length, 0, "no council ran for a capped session");
  const fresh = await collect(second.runTurn(testRequest({ sessionKey: "new" }), never));
  assert.deepEqual(fresh.outcome, { kind: "answer", text: "ran" });
});

Deno.test("ledger: only the most recent sessionCapacity sessions are restored", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  const writer = councilOnLedger(path, { fanOutPolicy: "never" });
  for (const key of ["a", "b", "c", "a"]) {
    await collect(writer.runTurn(testRequest({ sessionKey: key }), never));
  }
  const restored = new SessionStore(2);
  openLedger(path, restored);
  assert.deepEqual(restored.entries().map((s) => [s.key, s.turns]), [["c", 1], ["a", 2]]);
});

Deno.test("ledger: an unusable path fails at start; a failed append is logged, never thrown", async () => {
  const dir = await Deno.makeTempDir();
  assert.throws(
    () => openLedger(join(dir, "missing", "ledger.jsonl"), new SessionStore()),
    (err: Error) => err instanceof LedgerError && /its directory does not exist/.test(err.message),
  );
  assert.throws(() => openLedger(dir, new SessionStore()), LedgerError);

  const path = join(dir, "ledger.jsonl");
  const errors: string[] = [];
  const log = {
    info: () => {},
    warn: () => {},
    error: (message: string, fields: Record<string, unknown>) =>
      errors.push(`${message} ${JSON.stringify(fields)}`),
  } as unknown as Parameters<typeof openLedger>[2];
  const append = openLedger(path, new SessionStore(), log);
  await Deno.remove(dir, { recursive: true });
  const council = createCouncil({
    config: testConfig({ fanOutPolicy: "never" }),
    runAgent: fakeAgents(() => ({ text: "fine" })).runAgent,
    clock: new FakeClock(),
    onTurnEnd: append,
  });
  const turn = await collect(council.runTurn(testRequest(), never));
  assert.deepEqual(turn.outcome, { kind: "answer", text: "fine" });
  assert.equal(errors.length, 1);
  assert.match(errors[0], /cannot append turn/);
});
