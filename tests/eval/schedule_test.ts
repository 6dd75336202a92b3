/** The eval's schedule: which runs are left, the spend cap, the concurrency limit, progress. */
import assert from "node:assert/strict";
import type { Arm } from "../../src/eval/arms.ts";
import { progressLine } from "../../src/eval/progress_bar.ts";
import type { RunResult } from "../../src/eval/results.ts";
import { type Job, pendingJobs, runJobs } from "../../src/eval/schedule.ts";
import type { Task } from "../../src/eval/task.ts";

const task = (name: string) => ({ name }) as Task;
const arm = (name: string) => ({ name, kind: "council", config: {} }) as Arm;
const result = (job: Job, usd: number, passed = true): RunResult => ({
  arm: job.arm.name,
  task: job.task.name,
  run: job.run,
  passed,
  usd,
  wallMs: 1,
  turns: 1,
  tokens: 1,
});

Deno.test("pending runs: round by round, every task and arm, those recorded skipped", () => {
  const done = [{ arm: "b", task: "t1", run: 1 } as RunResult];
  const jobs = pendingJobs([task("t1"), task("t2")], [arm("a"), arm("b")], 2, done);
  assert.deepEqual(jobs.map((j) => `${j.arm.name}/${j.task.name}#${j.run}`), [
    "a/t1#1",
    "a/t2#1",
    "b/t2#1",
    "a/t1#2",
    "b/t1#2",
    "a/t2#2",
    "b/t2#2",
  ]);
});

Deno.test("the spend cap starts no run once reached; every started run is recorded", async () => {
  const jobs = pendingJobs([task("t1"), task("t2"), task("t3")], [arm("a")], 2, []);
  const recorded: RunResult[] = [];
  const end = await runJobs(jobs, {
    concurrency: 1,
    maxUsd: 1,
    spentUsd: 0.25,
    signal: new AbortController().signal,
    run: (job) => Promise.resolve(result(job, 0.5)),
    record: (r) => void recorded.push(r),
    progress: () => {},
  });
  assert.equal(recorded.length, 2, "0.25 + 0.5 < 1 allows a second run, then 1.25 ≥ 1");
  assert.deepEqual(end, { finished: 2, skippedForCap: 4, interrupted: false });
});

Deno.test("at most `concurrency` runs at once; an interrupted run is not recorded", async () => {
  const jobs = pendingJobs([task("t1"), task("t2"), task("t3"), task("t4")], [arm("a")], 1, []);
  let running = 0;
  let most = 0;
  const interrupt = new AbortController();
  const recorded: RunResult[] = [];
  const end = await runJobs(jobs, {
    concurrency: 2,
    maxUsd: 0,
    spentUsd: 0,
    signal: interrupt.signal,
    run: async (job) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      if (job.task.name === "t2") interrupt.abort();
      // As runOnce: a run the interrupt reached is ended and not returned.
      return interrupt.signal.aborted ? undefined : result(job, 0);
    },
    record: (r) => void recorded.push(r),
    progress: () => {},
  });
  assert.equal(most, 2);
  assert.deepEqual(recorded.map((r) => r.task), ["t1"]);
  assert.equal(end.interrupted, true);
});

Deno.test("the progress line: a bar, runs done of all, passes, spend and what runs", () => {
  assert.equal(
    progressLine({ done: 6, total: 24, passed: 4, usd: 1.5, running: ["council/t1#2"] }),
    "[######------------------] 6/24 runs · 4 passed · $1.50 · running council/t1#2",
  );
});
