/**
 * The closing `turn done: …` log line says how the turn ended: a cancelled turn still hands its
 * host an answer (a notice), but its line must say `cancelled`, not `answer`.
 */
import assert from "node:assert/strict";
import type { LogRecord } from "@logtape/logtape";
import { withLogs } from "../../support/captured_logs.ts";
import { FakeClock } from "../../support/fake_clock.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import {
  collect,
  fakeAgents,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";

const doneLines = (records: LogRecord[]) =>
  records.map((r) => r.message.map(String).join("")).filter((m) => m.startsWith("turn done:"));

Deno.test("turn log: a cancelled turn ends with 'turn done: cancelled'; a finished one with its outcome", async () => {
  await withLogs(async (records) => {
    const fake = fakeAgents(() => ({ text: "an answer", hang: true }));
    const { runTurn } = createCouncil({
      config: testConfig({ fanOutPolicy: "never" }),
      runAgent: fake.runAgent,
      clock: new FakeClock(),
    });
    const stop = new AbortController();
    const watcher = new TurnWatcher(runTurn(testRequest(), stop.signal));
    await watcher.progressMatching(/started/);
    stop.abort();
    const cancelled = await watcher.finished;
    assert.equal(cancelled.outcome.kind, "answer", "the host still gets an answer");
    assert.deepEqual(doneLines(records), ["turn done: cancelled"]);
  });
  await withLogs(async (records) => {
    const fake = fakeAgents(() => ({ text: "an answer" }));
    const { runTurn } = createCouncil({
      config: testConfig({ fanOutPolicy: "never" }),
      runAgent: fake.runAgent,
      clock: new FakeClock(),
    });
    await collect(runTurn(testRequest(), new AbortController().signal));
    assert.deepEqual(doneLines(records), ["turn done: answer"]);
  });
});
