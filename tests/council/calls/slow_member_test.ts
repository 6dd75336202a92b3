/**
 * Slow is not failing: a member that answers, only later than its grace, has its grace grow
 * toward its lateness and is never dropped; a failing one is cut at the quorum without grace once
 * and gets its grace again after that or after a cool-down (a fake clock; nothing sleeps).
 */
import assert from "node:assert/strict";
import type { ConfigFile } from "../../../src/config/mod.ts";
import type { LatenessHistory } from "../../../src/council/calls/lateness.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { FakeClock } from "../../support/fake_clock.ts";
import {
  byAgent,
  fakeAgents,
  type FakeReply,
  gate,
  testConfig,
  testRequest,
  type TurnLog,
  TurnWatcher,
} from "../../support/scripted_agents.ts";
import { eventually, within } from "../../support/wait.ts";

/** How gemini behaves in one turn: answers `lateMs` behind the quorum, hangs, or fails at once. */
type Gemini = { lateMs: number } | "hang" | "down";

const DOWN: FakeReply = { ok: false, error: "gemini: exit 1: 503 UNAVAILABLE" };

/** Three members over a fake clock; claude and codex answer at once, gemini as told per turn. */
function council(file: ConfigFile, history: LatenessHistory = {}) {
  const saved: LatenessHistory[] = [];
  let release = gate();
  let gemini: Gemini = "hang";
  /** When set, the synthesizer answers only once it opens (one that takes its time). */
  let synthesizer: ReturnType<typeof gate> | undefined;
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "ALPHA" },
    "codex:child": { text: "BRAVO" },
    "gemini:child": () =>
      gemini === "down"
        ? DOWN
        : { text: "CHARLIE", gate: release.promise, hang: gemini === "hang" },
    "claude:synth": () => ({ text: "combined", gate: synthesizer?.promise }),
  }));
  const clock = new FakeClock();
  const c = createCouncil({
    config: testConfig({ heartbeatMs: 1e9, telemetryMs: 1e9, ...file }),
    runAgent: fake.runAgent,
    clock,
    random: () => 0,
    latenessStore: { load: () => history, save: (h) => saved.push(h) },
  });
  const health = () => c.agentHealth().find((s) => s.agent === "gemini")!;

  /**
   * One turn. Once the quorum is in, time moves to gemini's answer if its grace covers it, else
   * to the grace's end. Returns the log and the grace gemini was given (undefined: none).
   */
  async function turn(behaviour: Gemini): Promise<{ log: TurnLog; graceMs?: number }> {
    gemini = behaviour;
    release = gate();
    fake.calls.length = 0;
    const watcher = new TurnWatcher(c.runTurn(testRequest(), new AbortController().signal));
    if (behaviour === "down" || !(await quorumOrEnd(watcher))) {
      return { log: await within(watcher.finished, "the turn") };
    }
    const line = watcher.progress.find((l) => l.startsWith("quorum:"))!;
    const given = line.match(/gemini gets (\d+\.\d)s more$/);
    const graceMs = given ? Math.round(Number(given[1]) * 1000) : undefined;
    if (graceMs !== undefined && typeof behaviour === "object" && behaviour.lateMs <= graceMs) {
      clock.advance(behaviour.lateMs);
      release.open();
    } else if (graceMs !== undefined) clock.advance(graceMs);
    return { log: await within(watcher.finished, "the turn"), graceMs };
  }
  /**
   * One turn of a member on probation while the synthesizer takes its time: once the synthesizer
   * has its prompt, time moves to gemini's answer if `lateMs` is within `graceMs`, else to the
   * grace's end; gemini's call ends before the synthesizer answers.
   */
  async function probationTurn(behaviour: Gemini, graceMs: number): Promise<TurnLog> {
    gemini = behaviour;
    release = gate();
    synthesizer = gate();
    fake.calls.length = 0;
    const watcher = new TurnWatcher(c.runTurn(testRequest(), new AbortController().signal));
    await within(
      watcher.progressMatching(/not waiting for gemini \(back from a cool-down/),
      "let go",
    );
    await eventually(() => fake.calls.some((call) => call.role === "synth"), "the synthesizer");
    const answers = typeof behaviour === "object" && behaviour.lateMs <= graceMs;
    clock.advance(answers ? behaviour.lateMs : graceMs);
    if (answers) release.open();
    await eventually(() => fake.active === 1, "gemini's end");
    synthesizer.open();
    synthesizer = undefined;
    return await within(watcher.finished, "the turn");
  }
  return { ...c, fake, clock, saved, health, turn, probationTurn };
}

/** Whether the turn reached its quorum line (false: it ended without one, gemini skipped). */
async function quorumOrEnd(watcher: TurnWatcher): Promise<boolean> {
  const quorum = watcher.progressMatching(/^quorum:/).then(() => true);
  return await Promise.race([quorum, watcher.finished.then(() => false)]);
}

const consulted = (c: { fake: { calls: { role: string; agent: { name: string } }[] } }) =>
  c.fake.calls.some((call) => call.role === "child" && call.agent.name === "gemini");

/** A user who raised the longest grace so the council waits for a usually late member. */
const QUORUM = { minAnswers: 2, graceMs: 3000, maxGraceMs: 10_000 };
const HEALTH = { failures: 2, cooldownMs: 60_000 };

Deno.test("slow member: a usually prompt member turning 5 s slow is never dropped; its grace grows and it answers within it", async () => {
  // Twenty punctual calls on record: its learned grace is the shortest, 1 s.
  const c = council({ quorum: QUORUM, health: HEALTH }, { gemini: Array(20).fill(0) });
  const graces: (number | undefined)[] = [];
  const answered: boolean[] = [];
  for (let i = 0; i < 12; i++) {
    const { log, graceMs } = await c.turn({ lateMs: 5000 });
    assert.ok(consulted(c), `turn ${i + 1}: gemini consulted`);
    assert.notEqual(c.health().state, "cooling-down", `turn ${i + 1}`);
    assert.equal(c.health().failuresInRow, 0, `turn ${i + 1}: a miss is no failure`);
    graces.push(graceMs);
    answered.push(!log.progress.some((l) => l.startsWith("gemini cut off")));
  }
  // Missed at 1 s; then the longest grace, answered within at 5 s; then its lateness × 1.5.
  assert.deepEqual(graces.slice(0, 3), [1000, 10_000, 7500]);
  assert.deepEqual(answered, [false, ...Array(11).fill(true)]);
  for (const grace of graces.slice(1)) assert.ok(grace! >= 5000 && grace! <= 10_000, `${grace}`);
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
  assert.equal(c.clock.pending, 0);
});

Deno.test("slow member: a missed grace shows as a miss, not a failure; one answer clears it", async () => {
  const c = council({ quorum: QUORUM, health: HEALTH });
  assert.equal((await c.turn({ lateMs: 7000 })).graceMs, 3000);
  assert.deepEqual(c.health(), {
    agent: "gemini",
    state: "healthy",
    failuresInRow: 0,
    missesInRow: 1,
  });
  const { graceMs, log } = await c.turn({ lateMs: 7000 });
  assert.equal(graceMs, 10_000, "after a miss: the longest grace");
  assert.match(log.progress.at(-1)!, /wrote the answer from 3 candidates$/);
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

Deno.test("hanging member: unanswered within its grace and then the longest, it cools down at once", async () => {
  const c = council({ quorum: { ...QUORUM, maxGraceMs: 8000 }, health: HEALTH });
  const start = c.clock.now();
  assert.equal((await c.turn("hang")).graceMs, 3000);
  assert.equal(c.health().state, "healthy", "one miss: it may be slow");
  assert.equal((await c.turn("hang")).graceMs, 8000);
  // Unanswered within the longest grace there is: a hang, a failure that cools it down at once.
  assert.equal(c.health().state, "cooling-down");
  assert.equal(c.health().failuresInRow, 1);
  assert.match(
    c.health().lastError ?? "",
    /^gemini: unanswered within the longest grace \(8\.0s\) 2 turns in a row: hanging, or slower than quorum\.maxGraceMs allows$/,
  );
  assert.equal(c.clock.now() - start, 11_000, "what the hang cost: two graces");
  await c.turn("hang");
  assert.ok(!consulted(c), "skipped while cooling down");
  // After the cool-down: on probation, it is not waited for past the quorum. The synthesizer
  // answers at once here, so the turn is over before its grace: its chance is not over yet.
  c.clock.advance(60_000);
  const before = c.clock.now();
  const chance = await c.turn("hang");
  assert.ok(consulted(c));
  assert.equal(chance.graceMs, undefined);
  assert.equal(c.clock.now(), before, "nothing waited");
  assert.ok(
    chance.log.progress.some((l) =>
      l.endsWith(
        "not waiting for gemini (back from a cool-down for not answering in time): " +
          "it runs on 8.0s at most, to show it keeps up",
      )
    ),
    chance.log.progress.join("\n"),
  );
  assert.equal(c.health().state, "failing");
  assert.equal(c.health().failuresInRow, 1);
  assert.equal(c.clock.pending, 0, "its grace timer went with the turn");
});

Deno.test("failing member: an error makes it a suspect, cut at the quorum with no grace waited, once", async () => {
  const c = council({ quorum: QUORUM, health: { failures: 3, cooldownMs: 60_000 } });
  await c.turn("down");
  const before = c.clock.now();
  const cut = await c.turn("hang");
  assert.equal(cut.graceMs, undefined);
  assert.equal(c.clock.now(), before, "no grace was waited");
  assert.ok(cut.log.progress.some((l) => l.startsWith("gemini cut off after")));
  assert.deepEqual(c.health(), {
    agent: "gemini",
    state: "failing",
    failuresInRow: 1,
    missesInRow: 1,
    lastError: "gemini: exit 1: 503 UNAVAILABLE",
  });
  // The next call gets the longest grace, and a slow answer within it clears the record.
  const chance = await c.turn({ lateMs: 2000 });
  assert.equal(chance.graceMs, 10_000);
  assert.ok(!chance.log.progress.some((l) => l.startsWith("gemini cut off")));
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

Deno.test("after a cool-down: the first call gets its grace (a fair chance), not a suspect's cut", async () => {
  const c = council({ quorum: QUORUM, health: HEALTH });
  await c.turn("down");
  await c.turn("down");
  assert.equal(c.health().state, "cooling-down");
  c.clock.advance(60_000);
  const { log, graceMs } = await c.turn({ lateMs: 2500 });
  assert.ok(consulted(c));
  assert.equal(graceMs, 3000, log.progress.join("\n"));
  assert.ok(!log.progress.some((l) => l.includes("last call failed")));
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

Deno.test("after a cool-down: a fair chance missed at the longest grace is the next failure and the next cool-down", async () => {
  // The default longest grace is the default grace: the fair chance is at the longest.
  const c = council({ quorum: { minAnswers: 2, graceMs: 3000 }, health: HEALTH });
  await c.turn("down");
  await c.turn("down");
  c.clock.advance(60_000);
  assert.equal((await c.turn({ lateMs: 9000 })).graceMs, 3000);
  assert.equal(c.health().state, "cooling-down");
  assert.equal(c.health().lastError, "gemini: exit 1: 503 UNAVAILABLE", "the failure it shows");
});

Deno.test("after a cool-down: a fair chance missed at a shorter grace is only a miss; the next grace is the longest", async () => {
  // It used to count as the next failure: a member back from an outage, once slow, was cooled
  // down again before it had the longest grace.
  const c = council({ quorum: QUORUM, health: HEALTH });
  await c.turn("down");
  await c.turn("down");
  c.clock.advance(60_000);
  assert.equal((await c.turn({ lateMs: 9000 })).graceMs, 3000);
  assert.equal(c.health().state, "failing", "missed, not cooled down again");
  assert.equal(c.health().missesInRow, 1);
  const last = await c.turn({ lateMs: 9000 });
  assert.equal(last.graceMs, 10_000);
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

Deno.test("after a suspect's cut: the next grace is the longest, and a slow answer within it clears the failure", async () => {
  // It used to be its learned grace (1 s here): one transient 503 and one slow answer were two
  // failures in a row, a cool-down.
  const c = council({ quorum: QUORUM, health: HEALTH }, { gemini: Array(20).fill(0) });
  await c.turn("down");
  assert.equal((await c.turn("hang")).graceMs, undefined, "the suspect is cut without grace");
  const chance = await c.turn({ lateMs: 5000 });
  assert.equal(chance.graceMs, 10_000);
  assert.ok(!chance.log.progress.some((l) => l.startsWith("gemini cut off")));
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

Deno.test("default grace bounds: a structurally slow member is waited for at most 3 s, misses twice, then is skipped at no cost", async () => {
  const c = council({ quorum: { minAnswers: 2, graceMs: 3000 }, health: HEALTH });
  const start = c.clock.now();
  assert.equal((await c.turn({ lateMs: 8000 })).graceMs, 3000);
  assert.equal(c.health().state, "healthy", "one miss: it may be slow");
  assert.equal((await c.turn({ lateMs: 8000 })).graceMs, 3000, "the longest grace is 3 s");
  assert.equal(c.clock.now() - start, 6000, "never more than the 3 s grace a turn");
  assert.equal(c.health().state, "cooling-down");
  assert.equal(
    c.health().lastError,
    "gemini: unanswered within the longest grace (3.0s) 2 turns in a row: hanging, or slower " +
      "than quorum.maxGraceMs allows",
  );
  const skipped = await c.turn({ lateMs: 8000 });
  assert.ok(!consulted(c), "skipped while cooling down");
  assert.equal(skipped.graceMs, undefined, "nothing waited for");
  c.clock.advance(60_000);
  const before = c.clock.now();
  const chance = await c.turn({ lateMs: 8000 });
  assert.ok(consulted(c), "a fair chance after it");
  assert.equal(chance.graceMs, undefined, "on probation: not waited for past the quorum");
  assert.equal(c.clock.now(), before, "its chance cost the turn no wait");
});

Deno.test("no grace (graceMs 0): a straggler is never waited for, and never taken for hanging", async () => {
  const c = council({ quorum: { minAnswers: 2, graceMs: 0 }, health: HEALTH });
  for (let i = 0; i < 4; i++) {
    const { graceMs, log } = await c.turn("hang");
    assert.ok(consulted(c), `turn ${i + 1}: gemini consulted`);
    assert.equal(graceMs, 0, `turn ${i + 1}`);
    assert.ok(log.progress.some((l) => l.startsWith("gemini cut off")), `turn ${i + 1}`);
  }
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

Deno.test("slow member: one whose learned grace is already the longest and misses it once only missed", async () => {
  const c = council({ quorum: QUORUM, health: HEALTH }, { gemini: [8000, 9000, 9000] });
  const missed = await c.turn({ lateMs: 11_000 });
  assert.equal(missed.graceMs, 10_000);
  assert.ok(missed.log.progress.some((l) => l.startsWith("gemini cut off")));
  assert.deepEqual(c.health(), {
    agent: "gemini",
    state: "healthy",
    failuresInRow: 0,
    missesInRow: 1,
  });
  const answered = await c.turn({ lateMs: 9500 });
  assert.ok(!answered.log.progress.some((l) => l.startsWith("gemini cut off")));
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});

/** A member that cooled down for not answering within the longest grace, back on probation. */
async function backOnProbation() {
  const c = council({ quorum: { minAnswers: 2, graceMs: 3000 }, health: HEALTH });
  await c.turn({ lateMs: 8000 });
  await c.turn({ lateMs: 8000 });
  assert.equal(c.health().state, "cooling-down");
  c.clock.advance(60_000);
  return c;
}

Deno.test("probation: answering within its grace while the synthesizer works, a member is healthy again; its late answer is not used", async () => {
  const c = await backOnProbation();
  const start = c.clock.now();
  const log = await c.probationTurn({ lateMs: 2000 }, 3000);
  assert.equal(c.clock.now() - start, 2000, "the synthesizer did not wait for it");
  const synth = c.fake.calls.find((call) => call.role === "synth")!;
  assert.ok(!synth.prompt.includes("CHARLIE"), "the synthesizer had only the quorum's answers");
  assert.match(log.progress.at(-1)!, /wrote the answer from 2 candidates$/);
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
  // Healthy again: the next turn waits its grace for it as for any member.
  const next = await c.turn({ lateMs: 1000 });
  assert.equal(next.graceMs, 3000);
  assert.ok(!next.log.progress.some((l) => l.startsWith("gemini cut off")));
});

Deno.test("probation: still silent at its grace's end, a member cools down again, twice as long", async () => {
  const c = await backOnProbation();
  await c.probationTurn({ lateMs: 8000 }, 3000);
  const status = c.health();
  assert.equal(status.state, "cooling-down");
  assert.equal(status.failuresInRow, 2);
  assert.equal(status.coolingUntil, c.clock.now() + 120_000);
  assert.equal(c.clock.pending, 0);
});

Deno.test("probation: a turn over before its grace cuts the member with it; its chance comes again", async () => {
  const c = await backOnProbation();
  for (let i = 0; i < 2; i++) {
    const before = c.clock.now();
    await c.turn({ lateMs: 8000 });
    assert.ok(consulted(c), `turn ${i + 1}`);
    assert.equal(c.clock.now(), before, `turn ${i + 1}: nothing waited`);
    const gemini = c.fake.calls.find((call) => call.agent.name === "gemini")!;
    assert.ok(gemini.options.signal?.aborted, `turn ${i + 1}: cut with the turn`);
    assert.equal(c.fake.active, 0, `turn ${i + 1}: no call outlived the turn`);
    assert.equal(c.health().state, "failing", `turn ${i + 1}: neither cooled down nor cleared`);
  }
  const log = await c.probationTurn({ lateMs: 1500 }, 3000);
  assert.ok(log.progress.some((l) => l.includes("not waiting for gemini (back from a cool-down")));
  assert.deepEqual(c.health(), { agent: "gemini", state: "healthy", failuresInRow: 0 });
});
