/**
 * The eval's runs in order (run by run, every task and arm before the next round, so partial
 * results stay paired), at most `concurrency` at once, none started once the spend cap is
 * reached or the eval is interrupted; each result appended as it comes.
 */
import type { Arm } from "./arms.ts";
import type { ProgressState } from "./progress_bar.ts";
import { runKey, type RunResult } from "./results.ts";
import type { Task } from "./task.ts";

export interface Job {
  task: Task;
  arm: Arm;
  run: number;
}

/** The runs still to do: every task × arm × run not already recorded (pure). */
export function pendingJobs(
  tasks: readonly Task[],
  arms: readonly Arm[],
  runs: number,
  done: readonly RunResult[],
): Job[] {
  const recorded = new Set(done.map(runKey));
  const jobs: Job[] = [];
  for (let run = 1; run <= runs; run++) {
    for (const task of tasks) {
      for (const arm of arms) {
        if (!recorded.has(runKey({ arm: arm.name, task: task.name, run }))) {
          jobs.push({ task, arm, run });
        }
      }
    }
  }
  return jobs;
}

export interface ScheduleOptions {
  concurrency: number;
  /** 0: no cap. */
  maxUsd: number;
  /** Spend already recorded (a resumed eval counts it toward the cap). */
  spentUsd: number;
  signal: AbortSignal;
  run: (job: Job) => Promise<RunResult | undefined>;
  record: (result: RunResult) => void;
  progress: (state: ProgressState) => void;
}

export interface ScheduleEnd {
  finished: number;
  /** Runs not started because the spend cap was reached. */
  skippedForCap: number;
  interrupted: boolean;
}

const jobName = (job: Job) => `${job.arm.name}/${job.task.name}#${job.run}`;

/** Runs the jobs; resolves when all started ones have ended. */
export async function runJobs(
  jobs: readonly Job[],
  options: ScheduleOptions,
): Promise<ScheduleEnd> {
  const queue = [...jobs];
  const running = new Set<string>();
  const state = { done: 0, passed: 0, usd: options.spentUsd };
  let capped = false;
  const show = () =>
    options.progress({
      done: state.done,
      total: jobs.length,
      passed: state.passed,
      usd: state.usd,
      running: [...running],
    });
  const capReached = () => options.maxUsd > 0 && state.usd >= options.maxUsd;
  const worker = async () => {
    while (queue.length > 0 && !options.signal.aborted) {
      if (capReached()) {
        capped = true;
        return;
      }
      const job = queue.shift()!;
      running.add(jobName(job));
      show();
      const result = await options.run(job);
      running.delete(jobName(job));
      if (result) {
        options.record(result);
        state.done++;
        state.usd += result.usd;
        if (result.passed) state.passed++;
      }
      show();
    }
  };
  show();
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return {
    finished: state.done,
    skippedForCap: capped ? queue.length : 0,
    interrupted: options.signal.aborted,
  };
}
