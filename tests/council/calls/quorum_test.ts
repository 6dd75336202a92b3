/**
 * Quorum: once `minAnswers` children have usable results, stragglers get `graceMs` more and are
 * then cut off (named in progress and the recap, their spend still counted); on action turns a
 * majority of identical valid proposals ends the wait at once.
 */
import assert from "node:assert/strict";
import {
  byAgent,
  type FakeReply,
  gate,
  READ_TOOL,
  recordingCouncil,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";
import { within } from "../../support/wait.ts";

/** Lets queued microtasks drain without touching timers. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const council = recordingCouncil;

const read = (path: string) =>
  JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });

Deno.test("quorum: once minAnswers children answered, a straggler gets graceMs, then is cut off", async () => {
  const { runTurn, fake, clock, records } = council(
    { quorum: { minAnswers: 2, graceMs: 4000 } },
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { text: "BRAVO answer" },
      "gemini:child": {
        hang: true,
        durationMs: 9100,
        abortUsage: { inputTokens: 400, outputTokens: 20, costUsd: 0.02, estimated: true },
      },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum: 2 of 3 answers in — gemini gets 4\.0s more$/);
  clock.advance(3999);
  await settle();
  assert.ok(!watcher.progress.some((l) => l.includes("cut off")), "not before the grace is over");
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0, "still waiting");
  clock.advance(1);
  const log = await watcher.finished;

  assert.ok(
    log.progress.includes(
      "gemini cut off after 9.1s — quorum of 2 answers reached, 4.0s grace over",
    ),
    log.progress.join("\n"),
  );
  const synth = fake.calls.filter((c) => c.role === "synth");
  assert.equal(synth.length, 1);
  assert.match(synth[0].prompt, /ALPHA answer/);
  assert.match(synth[0].prompt, /BRAVO answer/);
  assert.ok(!synth[0].prompt.includes("Candidate C"), "two candidates only");
  assert.deepEqual(log.outcome, { kind: "answer", text: "combined" });
  assert.equal(
    log.progress.at(-1),
    "council: 3 agents (claude, codex, gemini) · 4.0s · 4 calls · $0.0500 · " +
      "gemini cut off after 9.1s · wrote the answer from 2 candidates",
  );
  // The cut-off child's spend counts: 3 × $0.01 + $0.02.
  assert.equal(Math.round(log.usage.usd * 1e4), 500);
  assert.equal(log.usage.inputTokens, 100 * 3 + 400);
  const gemini = records[0].calls.find((c) => c.label === "gemini");
  assert.equal(gemini?.cutOff, "quorum");
  assert.equal(clock.pending, 0, "the grace timer is gone");
});

Deno.test("quorum: a straggler answering within the grace is waited for", async () => {
  const late = gate();
  const { runTurn, fake, clock } = council(
    { quorum: { minAnswers: 2, graceMs: 3000 } },
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { text: "BRAVO answer" },
      "gemini:child": { text: "CHARLIE answer", gate: late.promise },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum: 2 of 3 answers in/);
  clock.advance(2999);
  late.open();
  const log = await watcher.finished;
  assert.ok(!log.progress.some((l) => l.includes("cut off")));
  assert.match(fake.calls.find((c) => c.role === "synth")!.prompt, /CHARLIE answer/);
  assert.equal(clock.pending, 0, "the grace timer is cleared once every child is in");
});

Deno.test("quorum: minAnswers 0 waits for every child, however long", async () => {
  const late = gate();
  const { runTurn, fake, clock } = council(
    { quorum: { minAnswers: 0, graceMs: 10 } },
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { text: "BRAVO answer" },
      "gemini:child": { text: "CHARLIE answer", gate: late.promise },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^codex: done/);
  clock.advance(600_000);
  await settle();
  late.open();
  const log = await watcher.finished;
  assert.ok(!log.progress.some((l) => l.startsWith("quorum") || l.includes("cut off")));
  assert.match(fake.calls.find((c) => c.role === "synth")!.prompt, /CHARLIE answer/);
});

Deno.test("quorum: failed and empty replies do not count toward it", async () => {
  const late = gate();
  const { runTurn, fake, clock } = council(
    { quorum: { minAnswers: 2, graceMs: 1000 } },
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { ok: false, error: "codex: exit 1: boom" },
      "gemini:child": { text: "CHARLIE answer", gate: late.promise },
      "claude:synth": { text: "combined" },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^codex: failed/);
  clock.advance(60_000);
  await settle();
  late.open();
  const log = await watcher.finished;
  assert.ok(!log.progress.some((l) => l.startsWith("quorum") || l.includes("cut off")));
  assert.match(fake.calls.find((c) => c.role === "synth")!.prompt, /CHARLIE answer/);
});

Deno.test("quorum: action turn — a majority of identical valid proposals ends the wait at once", async () => {
  const { runTurn, fake, records } = council(
    { quorum: { minAnswers: 3, graceMs: 60_000 } },
    byAgent({
      "claude:child": { text: read("/a") },
      "codex:child": { text: `Reading first:\n${read("/a")}` },
      "gemini:child": { hang: true, durationMs: 1200 },
    }),
  );
  // No clock advance: only the majority can end this wait.
  const log = await within(
    new TurnWatcher(runTurn(testRequest({ tools: [READ_TOOL] }), new AbortController().signal))
      .finished,
    "the turn, ended by the majority",
    5000,
  );
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/a" } });
  assert.ok(
    log.progress.includes(
      'majority: 2 of 3 propose Read {"file_path":"/a"} — not waiting for gemini',
    ),
    log.progress.join("\n"),
  );
  assert.ok(log.progress.some((l) => l.startsWith("gemini cut off after 1.2s — majority")));
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0, "synthesis skipped");
  assert.match(log.progress.at(-1)!, / · gemini cut off after 1\.2s$/);
  assert.equal(records[0].calls.find((c) => c.label === "gemini")?.cutOff, "quorum");
});

Deno.test("quorum: action turn — a majority of five cuts both stragglers, announced once", async () => {
  // claude and codex run two children each (claude, codex, gemini, claude#2, codex#2): the
  // first of each proposes, the second hangs.
  const seen = new Map<string, number>();
  const firstProposesThenHang = (call: { agent: { name: string } }): FakeReply => {
    const n = (seen.get(call.agent.name) ?? 0) + 1;
    seen.set(call.agent.name, n);
    return n === 1 ? { text: read("/a") } : { hang: true };
  };
  const { runTurn, records } = council(
    { councilSize: 5, quorum: { minAnswers: 5, graceMs: 60_000 } },
    byAgent({
      "claude:child": firstProposesThenHang,
      "codex:child": firstProposesThenHang,
      "gemini:child": { text: read("/a") },
    }),
  );
  const log = await within(
    new TurnWatcher(runTurn(testRequest({ tools: [READ_TOOL] }), new AbortController().signal))
      .finished,
    "the turn, ended by the majority",
    5000,
  );
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/a" } });
  assert.equal(log.progress.filter((l) => l.startsWith("majority: 3 of 5")).length, 1);
  assert.deepEqual(
    records[0].calls.filter((c) => c.cutOff === "quorum").map((c) => c.label).sort(),
    ["claude#2", "codex#2"],
  );
});

Deno.test("quorum: action turn — without a majority the grace applies, then the synthesizer picks", async () => {
  const { runTurn, fake, clock } = council(
    { quorum: { minAnswers: 2, graceMs: 2000 } },
    byAgent({
      "claude:child": { text: read("/a") },
      "codex:child": { text: read("/b") },
      "gemini:child": { hang: true },
      "claude:synth": { text: '{"choose": 2}' },
    }),
  );
  const watcher = new TurnWatcher(
    runTurn(testRequest({ tools: [READ_TOOL] }), new AbortController().signal),
  );
  await watcher.progressMatching(/^quorum: 2 of 3 answers in — gemini gets 2\.0s more$/);
  assert.ok(!watcher.progress.some((l) => l.startsWith("majority")));
  clock.advance(2000);
  const log = await watcher.finished;
  assert.ok(log.progress.some((l) => l.startsWith("gemini cut off after")));
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/b" } });
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 1);
});

Deno.test("quorum: a cancelled turn is not reported as a cut-off", async () => {
  const { runTurn, clock } = council(
    { quorum: { minAnswers: 2, graceMs: 2000 } },
    byAgent({ "*:child": { hang: true } }),
  );
  const controller = new AbortController();
  const watcher = new TurnWatcher(runTurn(testRequest(), controller.signal));
  await watcher.progressMatching(/^consulting/);
  controller.abort();
  const log = await watcher.finished;
  assert.ok(!log.progress.some((l) => l.includes("cut off")));
  assert.equal(clock.pending, 0);
});

Deno.test("quorum: a straggler whose agent's last call failed is cut at the quorum, without grace", async () => {
  let geminiCalls = 0;
  const { runTurn, fake, clock, records, agentHealth } = council(
    { quorum: { minAnswers: 2, graceMs: 3000 }, health: { failures: 2, cooldownMs: 60_000 } },
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { text: "BRAVO answer" },
      // Fails at once, then goes silent the way a CLI retrying a failing upstream does.
      "gemini:child": () =>
        ++geminiCalls === 1
          ? { ok: false, error: "gemini: exit 1: 503" }
          : { hang: true, durationMs: 1700 },
      "claude:synth": { text: "combined" },
    }),
  );
  await within(
    new TurnWatcher(runTurn(testRequest(), new AbortController().signal)).finished,
    "the first turn",
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  // No clock advance: the quorum alone ends gemini's call.
  const log = await within(watcher.finished, "the second turn", 5000);
  assert.ok(
    log.progress.includes("quorum: 2 of 3 answers in — not waiting for gemini: last call failed"),
    log.progress.join("\n"),
  );
  assert.ok(!log.progress.some((l) => l.includes("more")), "no grace is offered");
  assert.ok(log.progress.includes(
    "gemini cut off after 1.7s — quorum of 2 answers reached; its last call had failed",
  ));
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 2);
  assert.equal(records[1].calls.find((c) => c.label === "gemini")?.cutOff, "quorum");
  assert.equal(clock.pending, 0);
  // Not waiting is the council's own decision, no new failure (counting it dropped a slow agent
  // for good): gemini has failed once, and its next call gets a grace.
  const gemini = agentHealth().find((s) => s.agent === "gemini");
  assert.equal(gemini?.state, "failing");
  assert.equal(gemini?.failuresInRow, 1);
  const third = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await third.progressMatching(/^quorum: 2 of 3 answers in — gemini gets 3\.0s more$/);
  clock.advance(3000);
  await within(third.finished, "the third turn");
  // Silent to the end of that grace after a failure: the second failure; it cools down.
  assert.equal(agentHealth().find((s) => s.agent === "gemini")?.state, "cooling-down");
});

Deno.test("quorum: a healthy straggler still gets the grace when a failing one is cut at once", async () => {
  let turnNo = 0;
  const late = gate();
  const { runTurn } = council(
    { quorum: { minAnswers: 1, graceMs: 3000 } },
    byAgent({
      "claude:child": () => (++turnNo, { text: "ALPHA answer" }),
      "codex:child": () => turnNo === 1 ? { text: "BRAVO" } : { text: "BRAVO", gate: late.promise },
      "gemini:child": () =>
        turnNo === 1 ? { ok: false, error: "gemini: exit 1: 503" } : { hang: true },
      "claude:synth": { text: "combined" },
    }),
  );
  await within(
    new TurnWatcher(runTurn(testRequest(), new AbortController().signal)).finished,
    "the first turn",
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.progressMatching(/^quorum: 1 of 3 answers in — codex gets 3\.0s more$/);
  assert.ok(
    watcher.progress.includes(
      "quorum: 1 of 3 answers in — not waiting for gemini: last call failed",
    ),
    watcher.progress.join("\n"),
  );
  late.open();
  const log = await within(watcher.finished, "the second turn");
  assert.ok(log.progress.some((l) => l.startsWith("codex: done")), log.progress.join("\n"));
  assert.ok(!log.progress.some((l) => l.startsWith("codex cut off")));
  assert.ok(log.progress.some((l) => l.startsWith("gemini cut off after")));
});

Deno.test("quorum: a cut-off child's end does not hold the synthesizer; the turn ends after it", async () => {
  const groupOver = gate();
  const { runTurn, fake, clock } = council(
    { quorum: { minAnswers: 2, graceMs: 1000 } },
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { text: "BRAVO answer" },
      "gemini:child": { hang: true, windDown: groupOver.promise.then(() => {}) },
      "claude:synth": { text: "combined" },
    }),
  );
  let finished = false;
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  watcher.finished.then(() => (finished = true));
  await watcher.progressMatching(/^quorum:/);
  clock.advance(1000);
  await within(
    (async () => {
      while (!fake.calls.some((c) => c.role === "synth")) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })(),
    "the synthesizer's start while gemini's group is still ending",
  );
  await settle();
  assert.equal(finished, false, "the turn waits for the cut-off child's end");
  groupOver.open();
  const log = await within(watcher.finished, "the turn");
  assert.deepEqual(log.outcome, { kind: "answer", text: "combined" });
});

Deno.test("quorum: several stragglers whose last call failed are cut and named once", async () => {
  let turnNo = 0;
  const { runTurn } = council(
    { quorum: { minAnswers: 1, graceMs: 3000 } },
    byAgent({
      "claude:child": () => (++turnNo, { text: "ALPHA answer" }),
      "codex:child": () =>
        turnNo === 1
          ? { ok: false, error: "codex: exit 1: 500" }
          : { hang: true, durationMs: 1200 },
      "gemini:child": () =>
        turnNo === 1
          ? { ok: false, error: "gemini: exit 1: 503" }
          : { hang: true, durationMs: 1400 },
      "claude:synth": { text: "combined" },
    }),
  );
  await within(
    new TurnWatcher(runTurn(testRequest(), new AbortController().signal)).finished,
    "the first turn",
  );
  const log = await within(
    new TurnWatcher(runTurn(testRequest(), new AbortController().signal)).finished,
    "the second turn",
  );
  assert.deepEqual(
    log.progress.filter((l) => l.startsWith("quorum:")),
    ["quorum: 1 of 3 answers in — not waiting for codex, gemini: last call failed"],
  );
  assert.ok(log.progress.some((l) => l.startsWith("codex cut off after 1.2s")));
  assert.ok(log.progress.some((l) => l.startsWith("gemini cut off after 1.4s")));
});
