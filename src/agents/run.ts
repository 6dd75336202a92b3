/**
 * The agent runner the council uses: settings and defaults in one place, each agent prepared by
 * its kind (a CLI child, run_cli.ts, or an HTTP call, run_http.ts) and run; every failure,
 * a bug included, becomes a failed `AgentResult`.
 */
import { nodeCompileCacheDir } from "./cli/compile_cache.ts";
import { getLogger } from "@logtape/logtape";
import { type Clock, systemClock } from "../base/clock.ts";
import { type AgentConfig, isHttpRunner } from "../config/mod.ts";
import type { AgentPrompt, AgentRunner, PreparedRun, PrepareOptions, PriceTable } from "./types.ts";
import { scrubBaseEnv } from "./child_env.ts";
import { mergePricing } from "./cost.ts";
import { type GroupSpawn, machineGroupSpawn } from "./process/group_spawn.ts";
import type { GroupRegistry } from "./process/child_process.ts";
import { oneLine } from "../base/text.ts";
import { clockSleep } from "./http/completion_stream.ts";
import { type CliSettings, prepareCli } from "./cli/run_cli.ts";
import { type HttpSettings, prepareHttp } from "./http/run_http.ts";
import { failedResult, type RunIdentity, unstartableRun } from "./run_output.ts";

const logger = getLogger(["council-gateway", "agents"]);

export const DEFAULT_KILL_GRACE_MS = 2_000;
const DEFAULT_MAX_TEXT_CHARS = 2_000_000;
const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_RETRY_WAIT_MS = 30_000;

export interface AgentRunnerOptions {
  /** Config `passApiKeys`: keep provider credentials in the child's environment. */
  passApiKeys: boolean;
  /** Variables holding HTTP agents' keys (`apiKeyVariables`): no CLI child gets them either. */
  credentialVariables?: readonly string[];
  /**
   * The gateway's own secrets (its inbound token, its database's password): no child gets them,
   * under any variable name.
   */
  gatewaySecrets?: readonly string[];
  /** This gateway's own origins (e.g. http://127.0.0.1:6767), known once it listens. */
  selfOrigins: () => string[];
  /** Config `pricing`, merged over the built-in table. */
  pricing: PriceTable;
  /** Base environment for children; defaults to the gateway's own. */
  baseEnv?: Record<string, string>;
  /** Drives time-outs and durations (tests pass a fake one). */
  clock?: Clock;
  /** Real-time wait between SIGTERM and SIGKILL of a child's process group (default 2 s). */
  killGraceMs?: number;
  /** Most answer text kept per child, in characters; the rest is dropped (default 2 M). */
  maxTextChars?: number;
  /** Stdout lines longer than this many bytes are skipped whole (default 8 MiB). */
  maxLineBytes?: number;
  /** Whether the gateway runs as root (default: asks the OS). */
  isRoot?: boolean;
  /** HTTP runners: the wait before the one retry (default: on `clock`; tests return at once). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** HTTP runners: a longer `retry-after` fails the run instead of being waited for (30 s). */
  maxRetryWaitMs?: number;
  /** How CLI children get their own process group (default: `machineGroupSpawn()`). */
  groupSpawn?: GroupSpawn;
  /** Told of every CLI child's process group while it lives (the gateway's record of them). */
  groups?: GroupRegistry;
}

function runningAsRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return false;
  }
}

function gatewayEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}

/** Records of one child carry the turn id, for the `[turn <id>]` prefix (CONTRACT.md §1.2). */
const logFor = (turnId?: string) => (turnId ? logger.with({ turn: turnId }) : logger);

/** The settings of both kinds of run, from the options and their defaults. */
function settingsOf(options: AgentRunnerOptions): CliSettings & HttpSettings {
  const clock = options.clock ?? systemClock;
  const withheld = (options.gatewaySecrets ?? []).filter((secret) => secret !== "");
  /** The gateway's variables scrubbed once, again only when its origins change (at listen). */
  let scrubbed: { origins: string; env: Record<string, string> } | undefined;
  return {
    clock,
    prices: mergePricing(options.pricing),
    killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    maxTextChars: options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS,
    maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    isRoot: options.isRoot ?? runningAsRoot(),
    nodeCompileCache: nodeCompileCacheDir(options.baseEnv ?? gatewayEnv()),
    passApiKeys: options.passApiKeys,
    withheld,
    scrubbedEnv() {
      const selfOrigins = options.selfOrigins();
      const origins = selfOrigins.join("\n");
      if (scrubbed?.origins !== origins) {
        const base = options.baseEnv ?? gatewayEnv();
        const env = scrubBaseEnv({
          base,
          passApiKeys: options.passApiKeys,
          credentialVariables: options.credentialVariables,
          withheld,
          selfOrigins,
        });
        scrubbed = { origins, env };
      }
      return scrubbed.env;
    },
    groupSpawn: () => options.groupSpawn ?? machineGroupSpawn(),
    groups: options.groups,
    logFor,
    selfOrigins: options.selfOrigins,
    gatewayEnv: () => options.baseEnv ?? gatewayEnv(),
    sleep: options.sleep ?? clockSleep(clock),
    maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
  };
}

/** A bug in a run becomes that child's failure, logged; it must not take the turn down. */
function internalError(id: RunIdentity, err: unknown, turnId?: string) {
  const error = `${id.agent}: internal error: ${oneLine(String(err), 300)}`;
  logFor(turnId).error("{error}", { error });
  return error;
}

/** A prepared run whose preparation failed on a bug. */
function brokenRun(id: RunIdentity, error: string): PreparedRun {
  return {
    agent: id.agent,
    run: (_prompt, options = {}) => {
      const result = failedResult(id, error, { aborted: options.signal?.aborted ?? false });
      try {
        options.onEvent?.({ type: "finished", agent: id.agent, result });
      } catch { /* already failing */ }
      return Promise.resolve(result);
    },
    discard: () => Promise.resolve(),
  };
}

/** Keeps a prepared run's promises from throwing. */
function guarded(id: RunIdentity, run: PreparedRun): PreparedRun {
  return {
    agent: run.agent,
    pid: run.pid,
    ...(run.alive ? { alive: () => run.alive!() } : {}),
    async run(prompt, options = {}) {
      try {
        return await run.run(prompt, options);
      } catch (err) {
        return brokenRun(id, internalError(id, err, options.turnId)).run(prompt, options);
      }
    },
    async discard() {
      try {
        await run.discard();
      } catch (err) {
        internalError(id, err);
      }
    },
  };
}

/** Builds the runner the council uses. Neither it nor `prepare` ever throws. */
export function createAgentRunner(options: AgentRunnerOptions): AgentRunner {
  const settings = settingsOf(options);

  const prepare = async (agent: AgentConfig, opts: PrepareOptions): Promise<PreparedRun> => {
    const id = { agent: agent.name, model: opts.model ?? agent.model, role: opts.role };
    try {
      const prepared = isHttpRunner(agent.runner)
        ? prepareHttp(settings, agent, agent.runner, opts)
        : await prepareCli(settings, agent, opts);
      return guarded(id, prepared);
    } catch (err) {
      return brokenRun(id, internalError(id, err, opts.turnId));
    }
  };

  const run: AgentRunner = Object.assign(
    async (agent: AgentConfig, prompt: AgentPrompt, opts: Parameters<AgentRunner>[2]) => {
      if (opts.signal?.aborted) {
        // Nothing is started for a turn already cancelled.
        const id = { agent: agent.name, model: opts.model ?? agent.model, role: opts.role };
        return await unstartableRun(settings, id, "aborted before start").run(prompt, opts);
      }
      const prepared = await prepare(agent, opts);
      return await prepared.run(prompt, opts);
    },
    { prepare },
  );
  return run;
}
