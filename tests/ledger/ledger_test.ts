/**
 * The turn ledger: what a line holds, append + read back, tolerant reading, and the session
 * counters rebuilt from it so a restart resets no cap.
 */
import { tempDir } from "../support/git_repos.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../support/fake_clock.ts";
import { SessionStore } from "../../src/council/session.ts";
import { createCouncil, type TurnRecord } from "../../src/council/turn/turn.ts";
import type { TurnJournal } from "../../src/council/journal.ts";
import { setupLogging } from "../../src/base/log.ts";
import { resetSync } from "@logtape/logtape";
import {
  appendEntry,
  type LedgerEntry,
  ledgerEntry,
  LedgerError,
  openLedger,
  readLedger,
  rebuildSessions,
} from "../../src/ledger/mod.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  testConfig,
  testRequest,
} from "../support/scripted_agents.ts";
import { eventually } from "../support/wait.ts";

const never = new AbortController().signal;

/** A council whose turns are appended to the ledger at `path`, its sessions rebuilt from it. */
function councilOnLedger(
  path: string,
  file: Parameters<typeof testConfig>[0],
  script = fakeAgents(() => ({ text: "answer", usage: { costUsd: 0.25 } })),
) {
  const config = testConfig(file);
  const sessions = new SessionStore(config.sessionCapacity);
  const journal = openLedger(path, sessions);
  return createCouncil({
    config,
    runAgent: script.runAgent,
    clock: new FakeClock(),
    sessions,
    journal,
  });
}

function entries(path: string): LedgerEntry[] {
  const found: LedgerEntry[] = [];
  readLedger(path, (entry) => found.push(entry));
  return found;
}

Deno.test("ledger: a fanned-out turn's line holds decision, agents, every call and the totals", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
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
  assert.deepEqual(line.synthesis, { kind: "written", agent: "claude", candidates: 2 });
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

Deno.test("ledger: a call the council cut off says why; the line reads back", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "ledger.jsonl");
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "a" },
    "codex:child": { hang: true, retries: [{ attempt: 1 }, { attempt: 2 }, { attempt: 3 }] },
    "gemini:child": { text: "b" },
    "claude:synth": { text: "combined" },
  }));
  const council = councilOnLedger(path, { fanOutPolicy: "always", maxUpstreamRetries: 2 }, fake);
  await collect(council.runTurn(testRequest({ sessionKey: "s1" }), never));
  const [line] = entries(path);
  const status = (label: string) => {
    const call = line.calls.find((c) => c.label === label);
    return [call?.status, call?.cutOff];
  };
  assert.deepEqual(status("codex"), ["failed", "retries"]);
  assert.deepEqual(status("claude"), ["ok", undefined]);
  assert.deepEqual(status("claude (synth)"), ["ok", undefined]);
});

Deno.test("ledger: a capped turn is recorded but does not count; a cancelled one counts with its spend", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
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
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
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
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
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
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
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
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const path = join(dir, "ledger.jsonl");
  const writer = councilOnLedger(path, { fanOutPolicy: "never" });
  for (const key of ["a", "b", "c", "a"]) {
    await collect(writer.runTurn(testRequest({ sessionKey: key }), never));
  }
  const restored = new SessionStore(2);
  openLedger(path, restored);
  assert.deepEqual(restored.entries().map((s) => [s.key, s.turns]), [["c", 1], ["a", 2]]);
});

Deno.test("ledger: an unusable path fails at start", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  assert.throws(
    () => openLedger(join(dir, "missing", "ledger.jsonl"), new SessionStore()),
    (err: Error) => err instanceof LedgerError && /its directory does not exist/.test(err.message),
  );
  assert.throws(() => openLedger(dir, new SessionStore()), LedgerError);
});

/** A council on a ledger whose directory is then removed, its log lines captured. */
async function councilOnLostLedger(file: Parameters<typeof testConfig>[0]) {
  const dir = await Deno.makeTempDir();
  const ledger = openLedger(join(dir, "ledger.jsonl"), new SessionStore());
  await Deno.remove(dir, { recursive: true });
  const fake = fakeAgents(() => ({ text: "fine", usage: { costUsd: 0.01 } }));
  const lines: string[] = [];
  setupLogging({ level: "info", json: false, write: (line) => lines.push(line) });
  const council = createCouncil({
    config: testConfig({ fanOutPolicy: "never", ...file }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    journal: ledger,
  });
  return { council, fake, lines, dir };
}

Deno.test("ledger: a ledger that cannot be written is loud, in progress and the log, and turns go on", async () => {
  const { council, fake, lines } = await councilOnLostLedger({ fanOutPolicy: "always" });
  try {
    const turn = await collect(council.runTurn(testRequest(), never));
    assert.deepEqual(turn.outcome, { kind: "answer", text: "fine" });
    assert.equal(fake.calls.length, 4, "three children and the synthesizer ran");
    const alarm = turn.progress.filter((l) => /ledger .*cannot record/.test(l));
    assert.equal(alarm.length, 1, `once per turn:\n${turn.progress.join("\n")}`);
    assert.match(alarm[0], /its directory does not exist — this turn's spend is not recorded/);
    assert.ok(lines.some((l) => / ERROR .*ledger .*cannot record the start of turn/.test(l)));
    assert.ok(lines.some((l) => / ERROR .*ledger .*cannot record a call of turn/.test(l)));
    assert.ok(lines.some((l) => / ERROR .*ledger .*cannot record turn/.test(l)), "the end too");
  } finally {
    resetSync();
  }
});

Deno.test("ledger: maxSessionUsd fails closed while its ledger cannot persist, and reopens when it can", async () => {
  const { council, fake, dir } = await councilOnLostLedger({ maxSessionUsd: 5 });
  try {
    const refused = await collect(council.runTurn(testRequest({ sessionKey: "k" }), never));
    assert.equal(fake.calls.length, 0, "no agent ran");
    const text = (refused.outcome as { text: string }).text;
    assert.match(text, /cannot keep its spend record/);
    assert.match(text, /maxSessionUsd/);
    assert.ok(refused.progress.some((l) => /no council run: maxSessionUsd cannot hold/.test(l)));
    assert.deepEqual(council.sessions.peek("k"), { key: "k", turns: 0, usd: 0 });

    await Deno.mkdir(dir);
    const ran = await collect(council.runTurn(testRequest({ sessionKey: "k" }), never));
    assert.deepEqual(ran.outcome, { kind: "answer", text: "fine" });
    assert.deepEqual(entries(join(dir, "ledger.jsonl")).map((e) => e.decision), ["single"]);
  } finally {
    resetSync();
  }
});

Deno.test("ledger: an append after a torn last line keeps the torn line apart and the new entry whole", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const path = join(dir, "ledger.jsonl");
  const council = councilOnLedger(path, { fanOutPolicy: "never" });
  await collect(council.runTurn(testRequest({ sessionKey: "a" }), never));
  const [first] = entries(path);
  // A crash mid-write: half a line, no newline.
  await Deno.writeTextFile(path, JSON.stringify(first).slice(0, 50), { append: true });
  appendEntry(path, { ...first, session: "b" });
  await collect(council.runTurn(testRequest({ sessionKey: "c" }), never));

  assert.deepEqual(entries(path).map((e) => e.session), ["a", "b", "c"]);
  const scan = readLedger(path, () => {});
  assert.equal(scan.skipped, 1, "only the torn line is lost");
});

/** A journal that writes to `ledger` until the simulated crash, then nothing (the process is gone). */
function crashable(ledger: TurnJournal) {
  let crashed = false;
  const journal: TurnJournal = {
    started: (start) => crashed || ledger.started(start),
    called: (start, call, at) => crashed || ledger.called(start, call, at),
    ended: (record) => crashed || ledger.ended(record),
  };
  return { journal, crash: () => (crashed = true) };
}

Deno.test("ledger: a turn in flight at a crash is settled at the next start from the calls it finished", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const path = join(dir, "ledger.jsonl");
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "a", usage: { costUsd: 0.1 } },
    "codex:child": { text: "b", usage: { costUsd: 0.2 } },
    "gemini:child": { hang: true },
  }));
  const config = testConfig({ fanOutPolicy: "always", maxSessionUsd: 0.25 });
  const sessions = new SessionStore(config.sessionCapacity);
  const { journal, crash } = crashable(openLedger(path, sessions));
  const council = createCouncil({
    config,
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    sessions,
    journal,
  });
  const stop = new AbortController();
  const running = collect(council.runTurn(testRequest({ sessionKey: "s" }), stop.signal));
  await eventually(
    () => fake.calls.length === 3 && fake.active === 1,
    "two children finished, one still running",
  );
  crash();

  // The next start: the interrupted turn counts, with the spend of its two finished calls.
  const restarted = new SessionStore(config.sessionCapacity);
  openLedger(path, restarted);
  assert.deepEqual(restarted.peek("s"), { key: "s", turns: 1, usd: 0.30000000000000004 });
  const settled = entries(path);
  assert.equal(settled.length, 1);
  assert.equal(settled[0].decision, "interrupted");
  assert.equal(settled[0].cancelled, true);
  assert.deepEqual(settled[0].calls.map((c) => [c.label, c.costUsd]), [["claude", 0.1], [
    "codex",
    0.2,
  ]]);
  // Settled once: a second start finds the same counters and appends nothing.
  const again = new SessionStore(config.sessionCapacity);
  openLedger(path, again);
  assert.deepEqual(again.peek("s"), restarted.peek("s"));
  assert.equal(entries(path).length, 1);
  // And the settled spend keeps the session at its cap.
  const after = createCouncil({
    config,
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    sessions: again,
  });
  const capped = await collect(after.runTurn(testRequest({ sessionKey: "s" }), never));
  assert.match((capped.outcome as { text: string }).text, /maxSessionUsd/);

  stop.abort();
  await running;
});

Deno.test("ledger: a capped session stays capped after it falls out of memory (looked up again)", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const path = join(dir, "ledger.jsonl");
  const fake = fakeAgents(() => ({ text: "ran", usage: { costUsd: 0.25 } }));
  const council = councilOnLedger(
    path,
    { fanOutPolicy: "never", maxSessionUsd: 0.25, sessionCapacity: 2 },
    fake,
  );
  await collect(council.runTurn(testRequest({ sessionKey: "capped" }), never));
  for (const key of ["b", "c", "d"]) {
    await collect(council.runTurn(testRequest({ sessionKey: key }), never));
  }
  assert.equal(council.sessions.peek("capped"), undefined, "evicted from memory");
  const before = fake.calls.length;
  const turn = await collect(council.runTurn(testRequest({ sessionKey: "capped" }), never));
  assert.match((turn.outcome as { text: string }).text, /maxSessionUsd/);
  assert.equal(fake.calls.length, before, "no agent ran");
  assert.deepEqual(council.sessions.peek("capped"), { key: "capped", turns: 1, usd: 0.25 });
  // A session never seen is not looked up: it starts empty and runs.
  const fresh = await collect(council.runTurn(testRequest({ sessionKey: "new" }), never));
  assert.deepEqual(fresh.outcome, { kind: "answer", text: "ran" });
});

Deno.test("ledger: without a ledger an evicted session starts again from zero (the documented bound)", async () => {
  const fake = fakeAgents(() => ({ text: "ran", usage: { costUsd: 0.25 } }));
  const council = createCouncil({
    config: testConfig({ fanOutPolicy: "never", maxSessionUsd: 0.25, sessionCapacity: 1 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  await collect(council.runTurn(testRequest({ sessionKey: "x" }), never));
  await collect(council.runTurn(testRequest({ sessionKey: "y" }), never));
  const turn = await collect(council.runTurn(testRequest({ sessionKey: "x" }), never));
  assert.deepEqual(turn.outcome, { kind: "answer", text: "ran" });
});

Deno.test("ledger: a session that cannot be looked up again is refused under maxSessionUsd", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const path = join(dir, "ledger.jsonl");
  const fake = fakeAgents(() => ({ text: "ran", usage: { costUsd: 0.01 } }));
  const council = councilOnLedger(
    path,
    { fanOutPolicy: "never", maxSessionUsd: 1, sessionCapacity: 1 },
    fake,
  );
  await collect(council.runTurn(testRequest({ sessionKey: "old" }), never));
  await collect(council.runTurn(testRequest({ sessionKey: "other" }), never));
  // The ledger becomes unreadable (here: a directory where the file was).
  await Deno.remove(path);
  await Deno.mkdir(path);
  const turn = await collect(council.runTurn(testRequest({ sessionKey: "old" }), never));
  assert.equal(fake.calls.length, 2, "no agent ran");
  assert.match((turn.outcome as { text: string }).text, /cannot keep its spend record/);
  assert.ok(turn.progress.some((l) => /cannot look up this session's turns and spend/.test(l)));
});
