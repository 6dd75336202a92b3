/**
 * One CLI agent's child: spawned from the adapter's argv and a scrubbed environment before its
 * prompt is known, then given the prompt on stdin and read until it ends (or discarded unused).
 */
import type { AgentConfig } from "../../config/mod.ts";
import type {
  AgentPrompt,
  AgentResult,
  AttachmentDelivery,
  PreparedRun,
  PreparedRunOptions,
  PrepareOptions,
} from "../types.ts";
import { cliAdapter } from "./runners.ts";
import { childEnvFrom } from "../child_env.ts";
import type { GroupSpawn } from "../process/group_spawn.ts";
import {
  type ChildEnd,
  type GroupRegistry,
  type RunningChild,
  spawnChild,
} from "../process/child_process.ts";
import {
  type RecorderSettings,
  type RunIdentity,
  RunOutput,
  RunRecorder,
  seconds,
  unstartableRun,
} from "../run_output.ts";
import { oneLine } from "../../base/text.ts";
import { promptText } from "../prompt_text.ts";
import { deliverAttachments, removeDelivery, stdinFor } from "./attachment_files.ts";
import { type ThrowawayHome, throwawayHome } from "./state_home.ts";
import { tellingStderrLine } from "./stderr_reason.ts";
import { watchChild } from "./child_watch.ts";

/** What every CLI run of one runner shares. */
export interface CliSettings extends RecorderSettings {
  killGraceMs: number;
  maxLineBytes: number;
  isRoot: boolean;
  /** Where Node-based CLIs keep compiled code between runs (see compile_cache.ts). */
  nodeCompileCache?: string;
  passApiKeys: boolean;
  /** Values no child may see (the gateway's token). */
  withheld: string[];
  /** The gateway's environment, scrubbed. */
  scrubbedEnv(): Record<string, string>;
  /** This gateway's own origins (a CLI's own config may point back at them). */
  selfOrigins(): string[];
  groupSpawn(): GroupSpawn;
  groups?: GroupRegistry;
}

/**
 * Removes a child's temp dir: an empty one (the usual case) at once with one rmdir, one the
 * child left files in recursively off the main thread.
 */
async function removeTempDir(dir: string): Promise<void> {
  try {
    Deno.removeSync(dir);
  } catch {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The one-line reason a run failed (without the agent name), or undefined when it succeeded. */
function failureReason(
  exit: ChildEnd & { timedOut: boolean; aborted: boolean },
  output: RunOutput,
  needsFinal: boolean,
  timeoutMs: number,
): string | undefined {
  const stderrLine = tellingStderrLine(exit.stderrTail);
  const codeText = exit.exitCode === null
    ? "no exit code"
    : `exit code ${exit.exitCode}${exit.signal ? ` (${exit.signal})` : ""}`;
  if (exit.spawnError) return exit.spawnError;
  if (exit.aborted) return "aborted";
  if (exit.timedOut) return `timed out after ${seconds(timeoutMs)}`;
  if (output.final?.error) {
    return exit.exitCode ? `${codeText}: ${output.final.error}` : output.final.error;
  }
  if (exit.exitCode !== 0) {
    return `${codeText}: ${stderrLine ? oneLine(stderrLine, 300) : "no stderr output"}`;
  }
  if (needsFinal && !output.final) {
    const invalid = output.invalidLines
      ? `; ${output.invalidLines} unparseable line(s), last: ${output.lastInvalid}`
      : "";
    const stderr = stderrLine ? `; stderr: ${oneLine(stderrLine, 200)}` : "";
    return `exited 0 without a result${invalid}${stderr}`;
  }
  if (!output.answer.trim()) return "exited 0 with an empty answer";
  return undefined;
}

interface Attended {
  settings: CliSettings;
  agent: AgentConfig;
  id: RunIdentity;
  cwd: string;
  child: RunningChild;
  /** The turn's attachments as this child takes them (files already written). */
  delivery?: AttachmentDelivery;
  /** Where the child's stderr lines go once it runs (retries some CLIs announce there). */
  stderr: { onLine?: (line: string) => void };
}

/** A run's result, and the child's end still under way when the run returned early. */
interface Attendance {
  result: AgentResult;
  windingDown?: Promise<unknown>;
}

/** Gives a spawned child its prompt and reads it to the end, within the agent's time-out. */
async function attend(
  attended: Attended,
  prompt: AgentPrompt,
  options: PreparedRunOptions,
): Promise<Attendance> {
  const { settings, agent, id, child, delivery } = attended;
  const adapter = cliAdapter(agent);
  const text = promptText(prompt);
  const recorder = new RunRecorder({
    ...settings,
    id,
    promptChars: text.length,
    log: settings.logFor(options.turnId),
    ...options,
  });
  if (options.signal?.aborted) {
    await child.end();
    await child.ended;
    return { result: recorder.fail("aborted before start", true) };
  }
  const watch = watchChild(attended, recorder, options);
  // Only now: a consumer may abort from within it.
  recorder.emit({ type: "started", agent: id.agent, model: id.model, pid: child.pid });
  child.deliver(stdinFor(adapter, agent, prompt, delivery));
  const { timedOut, aborted, finalSeen, early } = await watch.over;
  if (early) {
    // Answered, cut off or cancelled: nothing more it says counts, so the run ends while its
    // group does.
    const end = { exitCode: aborted ? null : 0, signal: null, stderrTail: [], droppedLines: 0 };
    const exit = { ...end, timedOut, aborted };
    const reason = failureReason(
      exit,
      recorder.output,
      adapter.stdout === "jsonl",
      agent.timeoutMs,
    );
    return { result: recorder.finish(exit, reason), windingDown: child.ended };
  }
  const ended = await child.ended;
  // Ended after its answer: the exit status is our signal's, the final line is the verdict.
  const exit = finalSeen && !timedOut && !aborted
    ? { ...ended, exitCode: 0, signal: null, timedOut, aborted }
    : { ...ended, timedOut, aborted };
  const reason = failureReason(exit, recorder.output, adapter.stdout === "jsonl", agent.timeoutMs);
  return { result: recorder.finish(exit, reason) };
}

/** A child's environment and what it needs besides (a throwaway home, its own provider). */
interface ChildSetup {
  env: Record<string, string>;
  /** The user's default provider for this CLI is this gateway (read from the CLI's config). */
  providerIsGateway?: boolean;
  /** Where a CLI that records history keeps it for this run (removed with the run). */
  stateHome?: ThrowawayHome;
}

/** The child's environment: scrubbed, then the adapter's, the host's and the agent's variables. */
async function childSetup(
  settings: CliSettings,
  agent: AgentConfig,
  options: PrepareOptions,
): Promise<ChildSetup> {
  const adapter = cliAdapter(agent);
  const env = childEnvFrom(settings.scrubbedEnv(), {
    passApiKeys: settings.passApiKeys,
    withheld: settings.withheld,
    adapterEnv: adapter.env?.({
      access: options.access,
      isRoot: settings.isRoot,
      nodeCompileCache: settings.nodeCompileCache,
    }),
    hostCredentials: options.hostCredentials,
    agentEnv: agent.env,
  });
  const providerIsGateway = await adapter.userProvider?.(env, settings.selfOrigins());
  if (!adapter.stateHome) return { env, providerIsGateway };
  const stateHome = await throwawayHome(adapter.stateHome, env);
  env[adapter.stateHome.variable] = stateHome.path;
  return { env, providerIsGateway, stateHome };
}

/** The child of one run: argv from the adapter, spawned in `cwd` with its setup's env. */
function spawnFor(
  settings: CliSettings,
  agent: AgentConfig,
  options: PrepareOptions & {
    command: string;
    cwd: string;
    model: string;
    delivery?: AttachmentDelivery;
    setup: ChildSetup;
    stderr: Attended["stderr"];
  },
): ReturnType<typeof spawnChild> {
  const { command, cwd, setup: { env } } = options;
  const log = settings.logFor(options.turnId);
  const adapter = cliAdapter(agent);
  const args = adapter.argv(agent, {
    role: options.role,
    model: options.model,
    delivery: options.delivery,
    providerIsGateway: options.setup.providerIsGateway,
    access: options.access,
  });
  log.debug("{agent}: spawning {command} {args} in {cwd}", {
    agent: agent.name,
    command,
    args: args.join(" "),
    cwd,
  });
  return spawnChild({
    command,
    args,
    cwd,
    env,
    stdout: adapter.stdout === "text" ? "text" : "lines",
    maxLineBytes: settings.maxLineBytes,
    killGraceMs: settings.killGraceMs,
    groupSpawn: settings.groupSpawn(),
    groups: settings.groups,
    stdinPrimer: options.holdStdin ? adapter.stdinPrimer : undefined,
    onStderrLine: (line) => {
      log.debug("{agent} stderr: {line}", { agent: agent.name, line });
      options.stderr.onLine?.(line);
    },
  });
}

/** A spawned child as a prepared run: run once or discarded, its temp dir removed after. */
function preparedChild(attended: Attended, cleanUp: () => Promise<void>): PreparedRun {
  const { settings, id, child } = attended;
  let used = false;
  let exited = false;
  child.exited.then(() => (exited = true));
  return {
    agent: id.agent,
    pid: child.pid,
    alive: () => !exited,
    async run(prompt, runOptions = {}) {
      if (used) {
        return unstartableRun(settings, id, "already run or discarded").run(prompt, runOptions);
      }
      used = true;
      let attendance: Attendance | undefined;
      try {
        attendance = await attend(attended, prompt, runOptions);
        return attendance.result;
      } finally {
        const { windingDown } = attendance ?? {};
        if (windingDown) {
          runOptions.onWindDown?.(windingDown.then(cleanUp).catch(() => {}));
        } else await cleanUp();
      }
    },
    async discard() {
      if (used) return;
      used = true;
      await child.end();
      await child.ended;
      await cleanUp();
    },
  };
}

/** Spawns a CLI agent's child, waiting for its prompt. Throws only on a bug. */
export async function prepareCli(
  settings: CliSettings,
  agent: AgentConfig,
  options: PrepareOptions,
): Promise<PreparedRun> {
  const model = options.model ?? agent.model;
  const id: RunIdentity = { agent: agent.name, model, role: options.role };
  const command = agent.command ?? cliAdapter(agent).defaultCommand;
  if (!command) {
    return unstartableRun(settings, id, `runner "${agent.runner}" needs a \`command\` to run`);
  }
  // Async on purpose: while the mkdir runs off the main thread the event loop polls I/O, so a
  // reply's first bytes (already queued) leave before the spawns take the thread.
  const tempDir = options.cwd ? undefined : await Deno.makeTempDir({ prefix: "council-child-" });
  const cwd = options.cwd ?? tempDir!;
  let delivery: AttachmentDelivery | undefined;
  let setup: ChildSetup | undefined;
  const cleanUp = async () => {
    const warn = (dir: string | undefined) => (err: unknown) =>
      settings.logFor(options.turnId).warn("cannot remove {dir}: {error}", {
        dir,
        error: String(err),
      });
    await setup?.stateHome?.remove();
    await removeDelivery(delivery).catch(warn(delivery?.dir));
    if (tempDir) await removeTempDir(tempDir).catch(warn(tempDir));
  };
  const stderr: Attended["stderr"] = {};
  let child: ReturnType<typeof spawnChild>;
  try {
    // Files for the child (codex --image, gemini @path) in a directory of its own, never `cwd`.
    delivery = await deliverAttachments(cliAdapter(agent), options.attachments);
    setup = await childSetup(settings, agent, options);
    child = spawnFor(settings, agent, {
      ...options,
      command,
      cwd,
      model,
      delivery,
      setup,
      stderr,
    });
  } catch (err) {
    await cleanUp();
    throw err;
  }
  if ("spawnError" in child) {
    await cleanUp();
    return unstartableRun(settings, id, child.spawnError);
  }
  return preparedChild({ settings, agent, id, cwd, child, delivery, stderr }, cleanUp);
}
