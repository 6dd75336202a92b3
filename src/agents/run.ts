/**
 * Runs one agent on one prompt — a CLI (adapter argv, scrubbed env, spawn) or a model's HTTP API
 * (adapter request, streamed events) — with parsed events out and a final `AgentResult` in which
 * every failure is data.
 */
import { getLogger } from "@logtape/logtape";
import { type Clock, systemClock } from "../clock.ts";
import { type AgentConfig, type HttpRunner, isHttpRunner } from "../config.ts";
import type {
  AgentEvent,
  AgentResult,
  AgentUsage,
  ParsedLine,
  PriceTable,
  RunAgent,
  RunOptions,
} from "./types.ts";
import { ADAPTERS, HTTP_ADAPTERS } from "./adapters.ts";
import { childEnvFrom, pointsAtSelf, scrubBaseEnv } from "./env.ts";
import { costOf, estimateTokens, findPrice, mergePricing } from "./cost.ts";
import { type ChildExit, type GroupSpawn, machineGroupSpawn, runChild } from "./process.ts";
import { oneLine } from "../text.ts";
import { apiKeyEnvOf, baseUrlOf } from "./http.ts";
import { redact } from "./http_errors.ts";
import { clockSleep, streamCompletion, type StreamExit } from "./http_stream.ts";

const logger = getLogger(["council-gateway", "agents"]);

export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_MAX_TEXT_CHARS = 2_000_000;
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

export interface AgentRunnerOptions {
  /** Config `passApiKeys`: keep provider credentials in the child's environment. */
  passApiKeys: boolean;
  /** The gateway's own inbound token: no child gets it, under any variable name. */
  gatewayToken?: string;
  /** This gateway's own origins (e.g. http://127.0.0.1:6767), known once it listens. */
  selfOrigins: () => string[];
  /** Config `pricing`, merged over the built-in table. */
  pricing: PriceTable;
  /** Base environment for children; defaults to the gateway's own. */
  baseEnv?: Record<string, string>;
  /** Drives time-outs and durations (tests pass a FakeClock). */
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
}

export const DEFAULT_MAX_RETRY_WAIT_MS = 30_000;

/** How a run ended, whatever ran it (a `ChildExit` is one). */
type RunEnd = Pick<ChildExit, "exitCode" | "timedOut" | "aborted" | "droppedLines">;

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

/** What one run's stdout has said so far. */
class RunOutput {
  #parts: string[] = [];
  /** Characters kept in `#parts` (at most the cap). */
  #kept = 0;
  /** Characters of text seen, kept or not (drives the output-token estimate). */
  seenChars = 0;
  truncated = false;
  reportedInput?: number;
  reportedOutput?: number;
  reportedCost?: number;
  final?: { text?: string; error?: string };
  invalidLines = 0;
  lastInvalid?: string;

  constructor(readonly maxTextChars: number) {}

  /** Keeps text up to the cap; returns the part kept (to be streamed), "" when full. */
  addText(text: string): string {
    this.seenChars += text.length;
    const room = this.maxTextChars - this.#kept;
    const kept = text.length > room ? text.slice(0, Math.max(0, room)) : text;
    if (kept.length < text.length) this.truncated = true;
    if (kept) {
      this.#parts.push(kept);
      this.#kept += kept.length;
    }
    return kept;
  }

  get streamedText(): string {
    return this.#parts.join("");
  }

  /** The answer: the CLI's own final text when it gave one, else what streamed. */
  get answer(): string {
    const final = this.final?.text;
    if (!final) return this.streamedText;
    if (final.length > this.maxTextChars) this.truncated = true;
    return final.slice(0, this.maxTextChars);
  }

  get producedOutput(): boolean {
    return this.seenChars > 0 || this.final !== undefined || this.reportedInput !== undefined;
  }
}

/** Absolute counters for telemetry while the child works. */
function runningCounters(output: RunOutput, promptChars: number) {
  return {
    inputTokens: output.reportedInput ?? estimateTokens(promptChars),
    outputTokens: Math.max(output.reportedOutput ?? 0, estimateTokens(output.seenChars)),
  };
}

/** Final usage: reported numbers when the CLI gave them, otherwise estimates (chars/4). */
function settleUsage(
  output: RunOutput,
  promptChars: number,
  model: string,
  prices: Readonly<PriceTable>,
): AgentUsage {
  const tokensReported = (output.reportedInput ?? 0) > 0 || (output.reportedOutput ?? 0) > 0;
  const inputTokens = tokensReported
    ? output.reportedInput ?? 0
    : output.producedOutput
    ? estimateTokens(promptChars)
    : 0;
  const outputTokens = tokensReported
    ? output.reportedOutput ?? 0
    : estimateTokens(Math.max(output.seenChars, output.final?.text?.length ?? 0));
  const costReported = (output.reportedCost ?? 0) > 0;
  const price = findPrice(prices, model);
  const costUsd = costReported
    ? output.reportedCost!
    : price
    ? costOf(price, inputTokens, outputTokens)
    : 0;
  return { inputTokens, outputTokens, costUsd, estimated: !costReported || !tokensReported };
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}

/** The one-line reason a run failed (without the agent name), or undefined when it succeeded. */
function failureReason(
  exit: ChildExit,
  output: RunOutput,
  needsFinal: boolean,
  timeoutMs: number,
): string | undefined {
  const lastStderr = exit.stderrTail.at(-1);
  const codeText = exit.exitCode === null
    ? "no exit code"
    : `exit code ${exit.exitCode}${exit.signal ? ` (${exit.signal})` : ""}`;
  if (exit.spawnError) return exit.spawnError;
  if (!exit.spawned) return exit.aborted ? "aborted before start" : "not started";
  if (exit.aborted) return "aborted";
  if (exit.timedOut) return `timed out after ${seconds(timeoutMs)}`;
  if (output.final?.error) {
    return exit.exitCode ? `${codeText}: ${output.final.error}` : output.final.error;
  }
  if (exit.exitCode !== 0) {
    return `${codeText}: ${lastStderr ? oneLine(lastStderr, 300) : "no stderr output"}`;
  }
  if (needsFinal && !output.final) {
    const invalid = output.invalidLines
      ? `; ${output.invalidLines} unparseable line(s), last: ${output.lastInvalid}`
      : "";
    const stderr = lastStderr ? `; stderr: ${oneLine(lastStderr, 200)}` : "";
    return `exited 0 without a result${invalid}${stderr}`;
  }
  if (!output.answer.trim()) return "exited 0 with an empty answer";
  return undefined;
}

/** Why an HTTP run failed (without the agent name), or undefined when it succeeded. */
function httpFailureReason(
  exit: StreamExit,
  output: RunOutput,
  endMarker: string,
  timeoutMs: number,
  secret: string | undefined,
): string | undefined {
  if (exit.aborted) return "aborted";
  if (exit.timedOut) return `timed out after ${seconds(timeoutMs)}`;
  if (exit.error) return exit.error;
  if (output.final?.error) return redact(output.final.error, secret);
  if (!output.final) {
    const invalid = output.invalidLines
      ? `malformed stream: ${output.invalidLines} unparseable event(s), last: ${output.lastInvalid}; `
      : "";
    return `${invalid}stream ended without ${endMarker}`;
  }
  if (!output.answer.trim()) return "empty answer";
  return undefined;
}

/** Builds the runner the council uses. The returned function never throws. */
export function createAgentRunner(options: AgentRunnerOptions): RunAgent {
  const clock = options.clock ?? systemClock;
  const prices = mergePricing(options.pricing);
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxTextChars = options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const isRoot = options.isRoot ?? runningAsRoot();
  const sleep = options.sleep ?? clockSleep(clock);
  const maxRetryWaitMs = options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;

  const withheld = options.gatewayToken ? [options.gatewayToken] : [];
  /** The gateway's variables scrubbed once, again only when its origins change (at listen). */
  let scrubbed: { origins: string; env: Record<string, string> } | undefined;
  const scrubbedEnv = (): Record<string, string> => {
    const selfOrigins = options.selfOrigins();
    const origins = selfOrigins.join("\n");
    if (scrubbed?.origins !== origins) {
      const base = options.baseEnv ?? gatewayEnv();
      const env = scrubBaseEnv({ base, passApiKeys: options.passApiKeys, withheld, selfOrigins });
      scrubbed = { origins, env };
    }
    return scrubbed.env;
  };

  async function run(agent: AgentConfig, prompt: string, opts: RunOptions): Promise<AgentResult> {
    // Records of one child carry the turn id, for the `[turn <id>]` prefix (SPEC §1.2).
    const log = opts.turnId ? logger.with({ turn: opts.turnId }) : logger;
    const startedAt = clock.now();
    const model = opts.model ?? agent.model;
    const output = new RunOutput(maxTextChars);
    const emit = (event: AgentEvent) => {
      try {
        opts.onEvent?.(event);
      } catch (err) {
        log.warn("{agent}: event handler failed: {error}", {
          agent: agent.name,
          error: String(err),
        });
      }
    };
    const finish = (exit: RunEnd, reason: string | undefined): AgentResult => {
      const result: AgentResult = {
        agent: agent.name,
        model,
        role: opts.role,
        ok: reason === undefined,
        text: output.answer,
        ...(reason !== undefined ? { error: `${agent.name}: ${reason}` } : {}),
        exitCode: exit.exitCode,
        timedOut: exit.timedOut,
        aborted: exit.aborted,
        durationMs: clock.now() - startedAt,
        usage: settleUsage(output, prompt.length, model, prices),
        ...(output.truncated || exit.droppedLines > 0 ? { truncated: true } : {}),
      };
      // Failures reach warn through the caller (the council), which says what it does next.
      if (result.ok) {
        log.debug("{agent} finished in {ms} ms", { agent: agent.name, ms: result.durationMs });
      } else log.debug("{error}", { error: result.error });
      emit({ type: "finished", agent: agent.name, result });
      return result;
    };
    const notStarted = (reason: string): AgentResult =>
      finish({
        exitCode: null,
        timedOut: false,
        aborted: opts.signal?.aborted ?? false,
        droppedLines: 0,
      }, reason);

    let lastCounters = "";
    /** Books parsed items into the output and passes them on as events. */
    const absorb = (parsed: ParsedLine[]) => {
      let countersMoved = false;
      for (const item of parsed) {
        switch (item.type) {
          case "text": {
            const kept = output.addText(item.text);
            if (kept) emit({ type: "text", agent: agent.name, text: kept });
            countersMoved = true;
            break;
          }
          case "activity":
            emit({ type: "activity", agent: agent.name, text: item.text });
            break;
          case "usage":
            output.reportedInput = item.inputTokens ?? output.reportedInput;
            output.reportedOutput = item.outputTokens ?? output.reportedOutput;
            output.reportedCost = item.costUsd ?? output.reportedCost;
            countersMoved = true;
            break;
          case "final":
            output.final = { text: item.text, error: item.error };
            break;
          case "invalid":
            output.invalidLines++;
            output.lastInvalid = JSON.stringify(oneLine(item.line, 80));
            break;
        }
      }
      if (!countersMoved) return;
      const counters = runningCounters(output, prompt.length);
      const key = `${counters.inputTokens}/${counters.outputTokens}`;
      if (key === lastCounters) return;
      lastCounters = key;
      emit({
        type: "usage",
        agent: agent.name,
        ...counters,
        elapsedMs: clock.now() - startedAt,
      });
    };

    const runHttp = async (runner: HttpRunner): Promise<AgentResult> => {
      const adapter = HTTP_ADAPTERS[runner];
      const baseUrl = baseUrlOf(agent, adapter);
      if (!baseUrl) return notStarted(`runner "${agent.runner}" needs a \`baseUrl\``);
      if (pointsAtSelf("baseUrl", baseUrl, options.selfOrigins())) {
        return notStarted(`baseUrl ${baseUrl} points at this gateway itself (refused: recursion)`);
      }
      const keyName = apiKeyEnvOf(agent, adapter);
      const env = options.baseEnv ?? gatewayEnv();
      // The key is read from the gateway's own environment; `passApiKeys` is about CLI children.
      const apiKey = env[keyName] || undefined;
      if (!apiKey && adapter.keyRequired) {
        return notStarted(`${keyName} is not set in the gateway's environment (apiKeyEnv)`);
      }
      if (opts.signal?.aborted) return notStarted("aborted before start");
      const request = adapter.request(agent, { model, prompt, apiKey });
      const exit = await streamCompletion({
        adapter,
        request,
        secret: apiKey,
        agentName: agent.name,
        signal: opts.signal,
        timeoutMs: agent.timeoutMs,
        clock,
        sleep,
        maxRetryWaitMs,
        maxEventBytes: maxLineBytes,
        onStart: () => emit({ type: "started", agent: agent.name, model }),
        onItems: absorb,
      });
      return finish(
        { exitCode: null, timedOut: exit.timedOut, aborted: exit.aborted, droppedLines: 0 },
        httpFailureReason(exit, output, adapter.endMarker, agent.timeoutMs, apiKey),
      );
    };

    if (isHttpRunner(agent.runner)) return await runHttp(agent.runner);
    const adapter = ADAPTERS[agent.runner];
    const command = agent.command ?? adapter.defaultCommand;
    if (!command) return notStarted(`runner "${agent.runner}" needs a \`command\` to run`);
    if (opts.signal?.aborted) return notStarted("aborted before start");

    // Async on purpose: while the mkdir runs on Deno's blocking-op threads the event loop polls
    // I/O, so the reply's first bytes (already queued) leave before the spawns take the thread
    // (bench: time to first byte 1.4–2.3 ms this way, 4.1–4.2 ms with a sync mkdir; the turn's
    // overhead the same either way).
    const tempDir = opts.cwd ? undefined : await Deno.makeTempDir({ prefix: "council-child-" });
    const cwd = opts.cwd ?? tempDir!;
    try {
      const env = childEnvFrom(scrubbedEnv(), {
        passApiKeys: options.passApiKeys,
        withheld,
        adapterEnv: adapter.env?.({ isRoot }),
        hostCredentials: opts.hostCredentials,
        agentEnv: agent.env,
      });
      const args = adapter.argv(agent, { role: opts.role, model });
      const parse = adapter.createParser({ cwd });

      const onStdout = (piece: string) => {
        let parsed: ParsedLine[];
        try {
          parsed = parse(piece);
        } catch (err) {
          log.debug("{agent}: parser failed: {error}", {
            agent: agent.name,
            error: String(err),
          });
          parsed = [{ type: "invalid", line: piece }];
        }
        absorb(parsed);
      };

      log.debug("{agent}: spawning {command} {args} in {cwd}", {
        agent: agent.name,
        command,
        args: args.join(" "),
        cwd,
      });
      const exit = await runChild({
        command,
        args,
        cwd,
        env,
        stdin: prompt,
        stdout: adapter.stdout === "text" ? "text" : "lines",
        onStdout,
        onStderrLine: (line) => log.debug("{agent} stderr: {line}", { agent: agent.name, line }),
        onSpawn: (pid) => emit({ type: "started", agent: agent.name, model, pid }),
        timeoutMs: agent.timeoutMs,
        signal: opts.signal,
        clock,
        killGraceMs,
        maxLineBytes,
        groupSpawn: options.groupSpawn ?? (await machineGroupSpawn()).spawn,
      });
      return finish(
        exit,
        failureReason(exit, output, adapter.stdout === "jsonl", agent.timeoutMs),
      );
    } finally {
      if (tempDir) {
        await removeTempDir(tempDir).catch((err) =>
          log.warn("cannot remove {dir}: {error}", { dir: tempDir, error: String(err) })
        );
      }
    }
  }

  return async (agent, prompt, opts) => {
    try {
      return await run(agent, prompt, opts);
    } catch (err) {
      // A bug here must not take the turn down: it becomes this child's failure.
      const error = `${agent.name}: internal error: ${oneLine(String(err), 300)}`;
      (opts.turnId ? logger.with({ turn: opts.turnId }) : logger).error("{error}", { error });
      const result: AgentResult = {
        agent: agent.name,
        model: opts.model ?? agent.model,
        role: opts.role,
        ok: false,
        text: "",
        error,
        exitCode: null,
        timedOut: false,
        aborted: opts.signal?.aborted ?? false,
        durationMs: 0,
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
      };
      try {
        opts.onEvent?.({ type: "finished", agent: agent.name, result });
      } catch { /* already failing */ }
      return result;
    }
  };
}
