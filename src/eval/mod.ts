/**
 * `council-gateway eval`: runs a suite of tasks with each arm (the council, one member alone,
 * one member N times, any configuration) through the real host and reports whether the council
 * beats its best member on these tasks.
 */
import { join, resolve } from "node:path";
import { UsageError } from "../cli/args.ts";
import type { CliIo } from "../cli/io.ts";
import { loadConfig, overlayEnv, readConfigFile } from "../config/load.ts";
import { type SelfInvocation, selfInvocation } from "../daemon/self.ts";
import { ArmError, type ConfigObject, resolveArms } from "./arms.ts";
import { findHost } from "./host.ts";
import { type EvalOptions, parseEvalArgs } from "./options.ts";
import { progressWriter } from "./progress_bar.ts";
import { buildReport, reportMarkdown } from "./report.ts";
import { reportHtml } from "./report_html.ts";
import { appendResult, readResults } from "./results.ts";
import { runOnce } from "./runner.ts";
import { pendingJobs, runJobs } from "./schedule.ts";
import { loadSuite, TaskError } from "./task.ts";

/** What an eval touches beyond the CLI's I/O, injectable for tests. */
export interface EvalDeps {
  /** How a run's gateway is started (default: this program's `serve`). */
  self?: SelfInvocation;
  /** The whole environment runs start from (default: this process's). */
  environment?: Record<string, string>;
  /** Interrupts the eval (default: SIGINT). */
  signal?: AbortSignal;
  /** Whether stderr is a terminal (the progress bar is redrawn in place). */
  terminal?: boolean;
  now?: () => number;
}

function readArmFile(io: CliIo) {
  return (path: string): ConfigObject => {
    const file = readConfigFile(resolve(io.cwd, path), io.env, io.cwd);
    return overlayEnv(file.data, io.env).merged;
  };
}

/** SIGINT aborts the eval (runs in flight are ended, finished ones are kept). */
function interruptOnSigint(): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  const posix = Deno.build.os !== "windows";
  if (posix) Deno.addSignalListener("SIGINT", onSignal);
  return {
    signal: controller.signal,
    release: () => posix && Deno.removeSignalListener("SIGINT", onSignal),
  };
}

/** Runs the command (everything after `eval`) and returns the exit code. */
export async function evalCommand(
  argv: string[],
  io: CliIo,
  inherited: { config?: string } = {},
  deps: EvalDeps = {},
): Promise<number> {
  const options = parseEvalArgs(argv, inherited);
  if (options.help) {
    io.stdout((await import("../cli/help.ts")).HELP.eval);
    return 0;
  }
  const interrupt = deps.signal ? undefined : interruptOnSigint();
  try {
    return await runEval(options, io, deps, deps.signal ?? interrupt!.signal);
  } catch (err) {
    if (err instanceof ArmError) throw new UsageError(err.message);
    if (err instanceof TaskError) {
      io.stderr(`council-gateway eval: ${err.message}\n`);
      return 2;
    }
    throw err;
  } finally {
    interrupt?.release();
  }
}

async function runEval(
  options: EvalOptions,
  io: CliIo,
  deps: EvalDeps,
  signal: AbortSignal,
): Promise<number> {
  const config = loadConfig({ configPath: options.config, env: io.env, cwd: io.cwd });
  const base = overlayEnv(readConfigFile(options.config, io.env, io.cwd).data, io.env).merged;
  const tasks = loadSuite(resolve(io.cwd, options.suite));
  const arms = resolveArms(options.arms, base, config, readArmFile(io));
  const hostCommand = findHost(options.host, options.hostCommand, io.env);
  const out = resolve(io.cwd, options.out);
  const logDir = join(out, "logs");
  await Deno.mkdir(logDir, { recursive: true });
  const resultsFile = join(out, "results.jsonl");
  const done = readResults(resultsFile);
  const jobs = pendingJobs(tasks, arms, options.runs, done);
  const environment = deps.environment ?? Deno.env.toObject();
  const progress = progressWriter(io.stderr, deps.terminal ?? Deno.stderr.isTerminal());
  const armNames = arms.map((a) => a.name);
  const taskNames = new Set(tasks.map((t) => t.name));
  if (done.length) io.stderr(`resuming: ${done.length} runs already in ${resultsFile}\n`);
  const end = await runJobs(jobs, {
    concurrency: options.concurrency,
    maxUsd: options.maxUsd,
    spentUsd: done.reduce((sum, r) => sum + r.usd, 0),
    signal,
    run: (job) =>
      runOnce(job.task, job.arm, job.run, {
        self: deps.self ?? selfInvocation(),
        host: options.host,
        hostCommand,
        env: environment,
        logDir,
        signal,
        now: deps.now ?? (() => performance.now()),
      }),
    record: (result) => appendResult(resultsFile, result),
    progress: (state) => progress.update(state),
  });
  progress.end();
  const results = readResults(resultsFile).filter((r) =>
    armNames.includes(r.arm) && taskNames.has(r.task)
  );
  const report = buildReport(armNames, results);
  await Deno.writeTextFile(join(out, "report.md"), reportMarkdown(report));
  await Deno.writeTextFile(join(out, "report.html"), reportHtml(report));
  io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : reportMarkdown(report));
  if (end.skippedForCap > 0) {
    io.stderr(
      `stopped: the spend cap of $${options.maxUsd} was reached with ${end.skippedForCap} runs ` +
        `not started; rerun with a higher --max-usd to go on\n`,
    );
  }
  if (end.interrupted) {
    io.stderr(`interrupted: finished runs are kept in ${resultsFile}; rerun to resume\n`);
    return 130;
  }
  io.stderr(`report: ${join(out, "report.md")}, ${join(out, "report.html")}\n`);
  return 0;
}
