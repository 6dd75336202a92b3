/**
 * One run: a fresh copy of the task's workspace, its setup, the arm's own gateway, the host
 * headless in the copy pointed at it, then the check; the spend, turns and tokens read from the
 * run's ledger.
 */
import { cp } from "node:fs/promises";
import { join } from "node:path";
import type { SelfInvocation } from "../daemon/self.ts";
import { readLinesSync } from "../ledger/file.ts";
import { parseLine } from "../ledger/lines.ts";
import type { Arm } from "./arms.ts";
import { startGateway } from "./gateway.ts";
import { hostEnv, type HostName, hostPlan } from "./host.ts";
import { type CommandEnd, runCommand } from "./process.ts";
import type { RunResult } from "./results.ts";
import type { Task } from "./task.ts";

export interface RunEnv {
  self: SelfInvocation;
  host: HostName;
  /** The host CLI's executable. */
  hostCommand: string;
  /** The environment runs start from (the gateway's; the host and commands get less). */
  env: Record<string, string>;
  /** Where each run's log goes. */
  logDir: string;
  /** Set when the eval is interrupted: the run is ended and not recorded. */
  signal: AbortSignal;
  now: () => number;
}

/** What the gateway's ledger says about a run. */
export interface LedgerFigures {
  usd: number;
  turns: number;
  tokens: number;
}

/** Sums the finished turns of a run's ledger. */
export function ledgerFigures(path: string): LedgerFigures {
  const figures = { usd: 0, turns: 0, tokens: 0 };
  readLinesSync(path, (text) => {
    const line = parseLine(text ?? "");
    if (line.kind !== "turn") return;
    figures.usd += line.entry.costUsd;
    figures.turns++;
    figures.tokens += line.entry.inputTokens + line.entry.outputTokens;
  });
  return figures;
}

/** A file name part from an arm or task name. */
export const fileSafe = (name: string) => name.replace(/[^A-Za-z0-9_.-]+/g, "_");

async function copyWorkspace(task: Task, work: string, run: RunContext): Promise<string | null> {
  await cp(task.workspace, work, { recursive: true, verbatimSymlinks: true });
  if (!task.commit) return null;
  const end = await run.shell('git checkout -q --force "$EVAL_COMMIT" && git clean -fdxq', 60, {
    EVAL_COMMIT: task.commit,
  });
  return end.code === 0 ? null : `cannot check out ${task.commit}: ${end.tail.trim()}`;
}

interface RunContext {
  shell(script: string, timeoutSec: number, env?: Record<string, string>): Promise<CommandEnd>;
}

function failure(what: string, end: CommandEnd, limitSec: number): string | undefined {
  if (end.spawnError) return `${what}: ${end.spawnError}`;
  if (end.timedOut) return `${what} timed out after ${limitSec} s`;
  if (end.code !== 0) return `${what} exited ${end.code}`;
  return undefined;
}

/** Runs the task once with the arm; undefined when the eval was interrupted meanwhile. */
export async function runOnce(
  task: Task,
  arm: Arm,
  run: number,
  env: RunEnv,
): Promise<RunResult | undefined> {
  const dir = await Deno.makeTempDir({ prefix: "council-eval-" });
  const work = join(dir, "work");
  const log = join(env.logDir, `${fileSafe(arm.name)}--${fileSafe(task.name)}--${run}.log`);
  await Deno.writeTextFile(log, "");
  const base = { ...hostEnv(env.env), TASK_DIR: task.dir };
  const context: RunContext = {
    shell: (script, timeoutSec, extra = {}) =>
      runCommand({
        command: "sh",
        args: ["-c", script],
        cwd: work,
        env: { ...base, ...extra },
        timeoutMs: timeoutSec * 1000,
        log,
        signal: env.signal,
      }),
  };
  const result: RunResult = {
    arm: arm.name,
    task: task.name,
    run,
    passed: false,
    usd: 0,
    wallMs: 0,
    turns: 0,
    tokens: 0,
  };
  try {
    const error = await prepare(task, work, context);
    if (env.signal.aborted) return undefined;
    if (error) return { ...result, error };
    const hosted = await runHost(task, arm, dir, work, log, env);
    if (env.signal.aborted) return undefined;
    const check = await context.shell(task.check, task.timeoutSec);
    if (env.signal.aborted) return undefined;
    const checkError = check.code === 0 ? undefined : failure("check", check, task.timeoutSec);
    const passed = check.code === 0 && !check.timedOut;
    // A failing check is the task unsolved, not an error; a hung one is both.
    const shown = hosted.error ?? (check.timedOut || check.spawnError ? checkError : undefined);
    return {
      ...result,
      ...hosted.figures,
      passed,
      wallMs: hosted.wallMs,
      ...(shown ? { error: shown } : {}),
    };
  } catch (err) {
    if (env.signal.aborted) return undefined;
    return { ...result, error: (err as Error).message };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function prepare(task: Task, work: string, context: RunContext): Promise<string | null> {
  const copyError = await copyWorkspace(task, work, context);
  if (copyError) return copyError;
  if (!task.setup) return null;
  const setup = await context.shell(task.setup, task.hostTimeoutSec);
  return failure("setup", setup, task.hostTimeoutSec) ?? null;
}

interface Hosted {
  figures: LedgerFigures;
  wallMs: number;
  error?: string;
}

/** The arm's gateway up, the host run against it in the copy, the gateway down again. */
async function runHost(
  task: Task,
  arm: Arm,
  dir: string,
  work: string,
  log: string,
  env: RunEnv,
): Promise<Hosted> {
  const gateway = await startGateway(env.self, arm.config, dir, env.env, log);
  let end: CommandEnd;
  const started = env.now();
  try {
    const plan = hostPlan(env.host, gateway.origin, task.prompt);
    end = await runCommand({
      command: env.hostCommand,
      args: plan.args,
      cwd: work,
      env: { ...hostEnv(env.env), ...plan.env },
      timeoutMs: task.hostTimeoutSec * 1000,
      log,
      signal: env.signal,
    });
  } finally {
    await gateway.stop();
  }
  // Kept beside the log: `usage --agents --ledger` on it gives the run's seats.
  await Deno.copyFile(gateway.ledger, log.replace(/\.log$/, ".ledger.jsonl")).catch(() => {});
  const wallMs = Math.max(0, Math.round(env.now() - started));
  const error = failure(`host ${env.host}`, end, task.hostTimeoutSec);
  return { figures: ledgerFigures(gateway.ledger), wallMs, ...(error ? { error } : {}) };
}
