/**
 * Seats in the status API: `agents[].seat` counted from the ledger the gateway started with and
 * from the turns and results it saw since, for the window `?window=` asks (default all).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer } from "../../src/server/wiring.ts";
import { SeatRecords } from "../../src/status/seat_records.ts";
import { configOf } from "../support/test_config.ts";
import { byAgent, fakeAgents } from "../support/scripted_agents.ts";
import { postAction, readProposal } from "../support/action_requests.ts";

/** A turn of an earlier run, already in the ledger: claude's call chosen, then run fine. */
const EARLIER = [
  {
    v: 1,
    time: "2020-01-01T00:00:00.000Z",
    turn: "old1",
    session: "s0",
    sessionTurn: 1,
    sessionUsd: 1,
    counted: true,
    decision: "fanout",
    reason: "",
    agents: ["claude", "codex"],
    calls: ["claude", "codex"].map((agent) => ({
      agent,
      label: agent,
      role: "child",
      model: "m",
      status: "ok",
      durationMs: 100,
      inputTokens: 1,
      outputTokens: 1,
      costUsd: 0.5,
      estimated: false,
      proposal: "valid",
      agreed: agent === "claude",
      ...(agent === "claude" ? { chosen: true } : {}),
    })),
    outcome: "tool",
    failed: false,
    cancelled: false,
    wallMs: 100,
    inputTokens: 2,
    outputTokens: 2,
    costUsd: 1,
    chosen: {
      agent: "claude",
      label: "claude",
      toolUseId: "id-old",
      votes: 1,
      proposals: 2,
      valid: 2,
    },
  },
  {
    v: 1,
    kind: "outcome",
    time: "2020-01-01T00:00:01.000Z",
    turn: "old1",
    session: "s0",
    toolUseId: "id-old",
    result: "ok",
  },
];

Deno.test("status API: agents[].seat from the ledger and this run, per window; a bad window is a 400", async () => {
  const dir = await Deno.makeTempDir();
  const ledger = join(dir, "ledger.jsonl");
  await Deno.writeTextFile(ledger, EARLIER.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const fake = fakeAgents(byAgent({
    "claude:child": { text: readProposal("/a") },
    "codex:child": { text: readProposal("/b") },
    "claude:synth": { text: '{"choose": 2}' },
  }));
  const config = configOf({
    port: 0,
    ledger,
    fanOutPolicy: "always",
    defaultAgents: [{ runner: "claude", model: "m" }, { runner: "codex", model: "m" }],
  });
  const server = startServer(config, { runAgent: fake.runAgent });
  try {
    const ask = { role: "user", content: "Which of the two files is bigger?" };
    const first = await postAction(server.origin, [ask]);
    const call = first.content.find((b: { type: string }) => b.type === "tool_use");
    await postAction(server.origin, [ask, { role: "assistant", content: [call] }, {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: call.id,
        content: "The user doesn't want to proceed with this tool use.",
        is_error: true,
      }],
    }]);
    const seatsOf = async (query: string) => {
      const res = await fetch(`${server.origin}/v1/council/status${query}`);
      assert.equal(res.status, 200);
      const doc = await res.json();
      return Object.fromEntries(
        doc.agents.map((a: { agent: string; seat: Record<string, unknown> }) => [a.agent, a.seat]),
      );
    };
    const all = await seatsOf("");
    assert.deepEqual(
      [all.claude.turns, all.claude.chosen, all.claude.chosenOk, all.claude.agreed],
      [3, 1, 1, 1],
    );
    assert.deepEqual(
      [all.codex.turns, all.codex.chosen, all.codex.chosenRejected, all.codex.valid],
      [2, 1, 1, 2],
    );
    assert.match(all.codex.sentence, /^codex: chosen in 1 of 2 turns/);
    for (
      const key of [
        "turns",
        "proposals",
        "valid",
        "chosen",
        "chosenOk",
        "chosenError",
        "chosenRejected",
        "agreed",
        "failed",
        "usd",
        "medianMs",
      ]
    ) {
      assert.equal(typeof all.claude[key], "number", key);
    }
    const today = await seatsOf("?window=today");
    assert.deepEqual([today.claude.chosen, today.claude.chosenOk, today.codex.chosen], [0, 0, 1]);
    const week = await seatsOf("?window=7d");
    assert.equal(week.claude.turns, 2);
    const bad = await fetch(`${server.origin}/v1/council/status?window=month`);
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /window: "month" is not today, 7d or all/);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("seats: figures are computed once per change of the records, not on every status frame", () => {
  const records = new SeatRecords();
  const now = Date.parse("2026-11-28T12:00:00Z");
  const first = records.figures("all", now, ["claude"]);
  assert.equal(records.figures("all", now + 1_000, ["claude"]), first, "the same figures again");
  records.outcome("s1", { turn: "t1", toolUseId: "toolu_cgw_t1_0", result: "ok" }, now);
  const after = records.figures("all", now + 2_000, ["claude"]);
  assert.notEqual(after, first, "a new record: computed anew");
  // A window that moves with the clock is computed anew once a minute has passed.
  const today = records.figures("today", now, ["claude"]);
  assert.equal(records.figures("today", now + 30_000, ["claude"]), today);
  assert.notEqual(records.figures("today", now + 61_000, ["claude"]), today);
});
