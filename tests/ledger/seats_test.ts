/** Seats: counted exactly from scripted ledger records, per window, and told in one sentence. */
import assert from "node:assert/strict";
import type { LedgerCall, LedgerEntry, LedgerLine } from "../../src/ledger/lines.ts";
import { seats, seatSentence, windowStart } from "../../src/ledger/seats.ts";
import { runCli } from "../../src/cli/mod.ts";
import { seatsSummary } from "../../src/cli/doctor_seats.ts";
import type { Config } from "../../src/config/mod.ts";

const NOW = Date.parse("2026-11-28T12:00:00Z");

function child(agent: string, extra: Partial<LedgerCall> = {}): LedgerCall {
  return {
    agent,
    label: agent,
    role: "child",
    model: "m",
    status: "ok",
    durationMs: 1000,
    inputTokens: 10,
    outputTokens: 5,
    costUsd: 0.5,
    estimated: false,
    ...extra,
  };
}

function turn(id: string, time: string, calls: LedgerCall[], extra: Partial<LedgerEntry> = {}) {
  const entry: LedgerEntry = {
    v: 1,
    time,
    turn: id,
    session: "s",
    sessionTurn: 1,
    sessionUsd: 0,
    counted: true,
    decision: "fanout",
    reason: "",
    agents: calls.map((c) => c.label),
    calls,
    outcome: "tool",
    failed: false,
    cancelled: false,
    wallMs: 1000,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    ...extra,
  };
  return { kind: "turn", entry } as LedgerLine;
}

const outcome = (id: string, toolUseId: string, result: "ok" | "error" | "rejected") =>
  ({
    kind: "outcome",
    outcome: {
      v: 1,
      kind: "outcome",
      time: "2026-11-28T11:00:00Z",
      turn: id,
      session: "s",
      toolUseId,
      result,
    },
  }) as LedgerLine;

const chosen = (agent: string, toolUseId: string, votes: number) => ({
  chosen: { agent, label: agent, toolUseId, tool: "Bash", votes, proposals: 3, valid: 3 },
});

/** Three action turns today and one a month ago, with every kind of result. */
const RECORDS: LedgerLine[] = [
  // claude alone proposed the chosen call; the host ran it fine.
  turn("t1", "2026-11-28T10:00:00Z", [
    child("claude", { proposal: "valid", agreed: true, chosen: true, durationMs: 1000 }),
    child("codex", { proposal: "valid", agreed: false, durationMs: 3000 }),
    child("gemini", { proposal: "invalid", durationMs: 2000 }),
    { ...child("claude"), role: "synth", label: "claude (synth)", costUsd: 0.25 },
  ], chosen("claude", "id1", 1)),
  outcome("t1", "id1", "ok"),
  outcome("t1", "id1", "ok"), // resent by the host later: counted once
  // claude and gemini proposed it, claude credited; the command failed.
  turn("t2", "2026-11-28T10:05:00Z", [
    child("claude", { proposal: "valid", agreed: true, chosen: true, durationMs: 2000 }),
    child("codex", { status: "timed-out", proposal: "none", durationMs: 9000 }),
    child("gemini", { proposal: "valid", agreed: true, durationMs: 4000 }),
  ], chosen("claude", "id2", 2)),
  outcome("t2", "id2", "error"),
  // codex alone proposed it; the user rejected it.
  turn("t3", "2026-11-28T10:10:00Z", [
    child("claude", { proposal: "valid", agreed: false, durationMs: 3000 }),
    child("codex", { proposal: "valid", agreed: true, chosen: true, durationMs: 5000 }),
    child("gemini", { proposal: "valid", agreed: false, cutOff: "quorum", durationMs: 6000 }),
  ], chosen("codex", "id3", 1)),
  outcome("t3", "id3", "rejected"),
  outcome("t3", "toolu_other", "ok"), // another id: not this turn's chosen call
  // A month ago: codex chosen, the session ended before any result (unknown).
  turn("t0", "2026-10-28T10:00:00Z", [
    child("codex", { proposal: "valid", agreed: true, chosen: true }),
  ], chosen("codex", "id0", 1)),
  // An answer turn today whose synthesis picked gemini's candidate verbatim.
  turn("t4", "2026-11-28T10:20:00Z", [child("claude"), child("gemini")], {
    outcome: "answer",
    synthesis: { kind: "picked", agent: "claude", picked: "gemini", candidates: 2 },
  }),
];

Deno.test("seats count exactly the scripted choices and results", () => {
  const rows = seats(RECORDS, "today", NOW, ["claude", "codex", "gemini", "idle"]);
  const by = Object.fromEntries(rows.map((r) => [r.agent, r]));
  assert.deepEqual(rows.map((r) => r.agent), ["claude", "codex", "gemini", "idle"]);
  assert.deepEqual(by.claude, {
    agent: "claude",
    turns: 4,
    proposals: 3,
    valid: 3,
    chosen: 2,
    chosenOk: 1,
    chosenError: 1,
    chosenRejected: 0,
    agreed: 2,
    failed: 0,
    usd: 2.25,
    medianMs: 1500,
    decisive: 1,
  });
  assert.deepEqual(
    [by.codex.turns, by.codex.chosen, by.codex.chosenRejected, by.codex.failed, by.codex.proposals],
    [3, 1, 1, 1, 2],
  );
  assert.deepEqual(
    [by.gemini.chosen, by.gemini.agreed, by.gemini.failed, by.gemini.valid, by.gemini.proposals],
    [1, 1, 1, 2, 3],
  );
  assert.equal(by.idle.turns, 0);
});

Deno.test("the window decides which turns count", () => {
  const all = Object.fromEntries(seats(RECORDS, "all", NOW).map((r) => [r.agent, r]));
  assert.equal(all.codex.chosen, 2);
  assert.equal(all.codex.chosenOk + all.codex.chosenError + all.codex.chosenRejected, 1);
  const week = Object.fromEntries(seats(RECORDS, "7d", NOW).map((r) => [r.agent, r]));
  assert.equal(week.codex.chosen, 1);
  assert.equal(windowStart("today", NOW), Date.parse("2026-11-28T00:00:00Z"));
});

Deno.test("one sentence per member, saying when it never changed the outcome", () => {
  const rows = seats(RECORDS, "today", NOW, ["claude", "codex", "gemini", "idle"]);
  const never = seats(
    [
      turn("x", "2026-11-28T10:00:00Z", [
        child("claude", { proposal: "valid", agreed: true, chosen: true }),
        child("gemini", { proposal: "valid", agreed: true, costUsd: 4.1 }),
      ], chosen("claude", "id", 2)),
    ],
    "all",
    NOW,
  );
  assert.equal(
    seatSentence(never[1]),
    "gemini: chosen in 0 of 1 turns, agreed with the pick in 100 % — the council would have " +
      "decided the same without it ($4.10 spent)",
  );
  assert.match(
    seatSentence(rows[0]),
    /^claude: chosen in 2 of 4 turns, agreed with the pick in 67 % — 1 of its choices no other member proposed/,
  );
  assert.equal(seatSentence(rows[3]), "idle: sat in no turns ($0.00 spent)");
});

Deno.test("usage --agents prints each seat and its sentence; --json and --window", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ledger = `${dir}/ledger.jsonl`;
    const lines = RECORDS.map((r) =>
      JSON.stringify(r.kind === "turn" ? r.entry : r.kind === "outcome" ? r.outcome : r)
    );
    await Deno.writeTextFile(ledger, lines.join("\n") + "\n");
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(["usage", "--ledger", ledger, ...argv], {
        env: () => undefined,
        cwd: dir,
        stdout: (t) => void out.push(t),
        stderr: (t) => void err.push(t),
      });
      return { code, out: out.join(""), err: err.join("") };
    };
    const text = await run("--agents");
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /^Seats \(all time\)\n/);
    assert.match(text.out, /\ncodex +4 +3 +3 \(100 %\) +2 +0 +0 +1 /);
    assert.match(text.out, /\ngemini: chosen in 1 of 4 turns, agreed with the pick in 50 %/);
    const json = JSON.parse((await run("--agents", "--window", "today", "--json")).out);
    assert.equal(json.window, "today");
    const codex = json.agents.find((a: { agent: string }) => a.agent === "codex");
    assert.deepEqual(
      [codex.seat.turns, codex.seat.chosen, codex.seat.chosenRejected],
      [3, 1, 1],
    );
    assert.match(codex.sentence, /^codex: chosen in 1 of 3 turns/);
    const bad = await run("--agents", "--window", "month");
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--window "month": use today, 7d or all/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("doctor's summary: one sentence per member over the last week, nothing without turns", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ledger = `${dir}/ledger.jsonl`;
    const agents = ["claude", "codex"].map((name) => ({ name })) as Config["defaultAgents"];
    assert.equal(seatsSummary({ ledger: "", defaultAgents: agents }, NOW), "");
    assert.equal(seatsSummary({ ledger, defaultAgents: agents }, NOW), "");
    const turns = RECORDS.flatMap((r) => r.kind === "turn" ? [JSON.stringify(r.entry)] : []);
    await Deno.writeTextFile(ledger, turns.join("\n") + "\n");
    const text = seatsSummary({ ledger, defaultAgents: agents }, NOW);
    assert.match(text, /seats over the last 7 days/);
    assert.match(text, /\n {2}claude: chosen in 2 of 4 turns/);
    assert.match(text, /\n {2}codex: chosen in 1 of 3 turns/);
    assert.match(text, /\n {2}gemini: chosen in 1 of 4 turns/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
