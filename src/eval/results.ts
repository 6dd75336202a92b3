/**
 * The eval's results file: one JSON line per finished run, appended (and fsynced) as soon as the
 * run ends, so an interrupted eval loses no finished run and a rerun skips the runs it holds.
 */
import { z } from "zod";
import { appendLine, readLinesSync } from "../ledger/file.ts";

const count = z.number().int().nonnegative();

export const RunResultSchema = z.object({
  arm: z.string().min(1),
  task: z.string().min(1),
  /** 1-based run number of this arm on this task. */
  run: z.number().int().positive(),
  passed: z.boolean(),
  /** The gateway's spend on the run (its ledger). */
  usd: z.number().nonnegative(),
  wallMs: count,
  /** Council turns the host's requests became. */
  turns: count,
  tokens: count,
  /** Why the run did not finish normally (the host failed, the check timed out, …). */
  error: z.string().optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** What identifies a run across reruns. */
export function runKey(run: Pick<RunResult, "arm" | "task" | "run">): string {
  return JSON.stringify([run.arm, run.task, run.run]);
}

/** The runs a results file holds (none when it does not exist); unreadable lines are skipped. */
export function readResults(path: string): RunResult[] {
  const results = new Map<string, RunResult>();
  readLinesSync(path, (text) => {
    if (!text?.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    const parsed = RunResultSchema.safeParse(value);
    if (parsed.success) results.set(runKey(parsed.data), parsed.data);
  });
  return [...results.values()];
}

/** Appends one finished run. */
export function appendResult(path: string, result: RunResult): void {
  appendLine(path, JSON.stringify(result));
}
