/**
 * What one run's output said (text, usage, the CLI's final word), passed on as events and
 * settled into the `AgentResult`, whatever ran it (a CLI child or an HTTP call).
 */
import type { Logger } from "@logtape/logtape";
import type { Clock } from "../base/clock.ts";
import type {
  AgentEvent,
  AgentResult,
  AgentRole,
  AgentUsage,
  ParsedLine,
  PreparedRun,
  PriceTable,
} from "./types.ts";
import { costOf, estimateTokens, findCachePrice } from "./cost.ts";
import { oneLine } from "../base/text.ts";
import { promptText } from "./prompt_text.ts";

/** How a run ended, whatever ran it. */
interface RunEnd {
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  droppedLines: number;
}

/** What a run's stdout (or event stream) has said so far. */
export class RunOutput {
  #parts: string[] = [];
  /** Characters kept in `#parts` (at most the cap). */
  #kept = 0;
  /** Characters of text seen, kept or not (drives the output-token estimate). */
  seenChars = 0;
  truncated = false;
  reportedInput?: number;
  reportedOutput?: number;
  reportedCost?: number;
  reportedCacheRead?: number;
  reportedCacheWrite?: number;
  final?: { text?: string; error?: string };
  invalidLines = 0;
  lastInvalid?: string;
  /** Tool uses and other actions reported (evidence the model was reached). */
  activities = 0;

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

/**
 * Final usage: reported numbers when the CLI gave them, otherwise estimates (chars/4). A failed
 * run that shows no sign of reaching a model (no text, no tool use, no tokens, e.g. a refused
 * API key) costs nothing: the prompt is not billed by estimate.
 */
function settleUsage(
  output: RunOutput,
  promptChars: number,
  model: string,
  prices: Readonly<PriceTable>,
  ok: boolean,
): AgentUsage {
  const tokensReported = (output.reportedInput ?? 0) > 0 || (output.reportedOutput ?? 0) > 0;
  const reachedModel = ok || tokensReported || output.seenChars > 0 || output.activities > 0 ||
    (output.reportedCost ?? 0) > 0;
  if (!reachedModel) return { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true };
  const inputTokens = tokensReported
    ? output.reportedInput ?? 0
    : output.producedOutput
    ? estimateTokens(promptChars)
    : 0;
  const outputTokens = tokensReported
    ? output.reportedOutput ?? 0
    : estimateTokens(Math.max(output.seenChars, output.final?.text?.length ?? 0));
  const cache = {
    read: tokensReported ? output.reportedCacheRead ?? 0 : 0,
    write: tokensReported ? output.reportedCacheWrite ?? 0 : 0,
  };
  const costReported = (output.reportedCost ?? 0) > 0;
  const price = findCachePrice(prices, model);
  const costUsd = costReported
    ? output.reportedCost!
    : price
    ? costOf(price, inputTokens, outputTokens, cache)
    : 0;
  return {
    inputTokens,
    outputTokens,
    costUsd,
    estimated: !costReported || !tokensReported,
    ...(output.reportedCacheRead !== undefined ? { cacheReadTokens: cache.read } : {}),
    ...(output.reportedCacheWrite !== undefined ? { cacheWriteTokens: cache.write } : {}),
  };
}

/** Who ran, as every result names it. */
export interface RunIdentity {
  agent: string;
  model: string;
  role: AgentRole;
}

/** The result of a run that failed before it produced anything (`error` names the agent). */
export function failedResult(
  id: RunIdentity,
  error: string,
  { aborted = false, durationMs = 0 }: { aborted?: boolean; durationMs?: number } = {},
): AgentResult {
  return {
    ...id,
    ok: false,
    text: "",
    error,
    exitCode: null,
    timedOut: false,
    aborted,
    durationMs,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
  };
}

interface RecorderContext {
  id: RunIdentity;
  clock: Clock;
  prices: Readonly<PriceTable>;
  maxTextChars: number;
  promptChars: number;
  log: Logger;
  onEvent?: (event: AgentEvent) => void;
}

/** Books one run's parsed output, passes it on as events, and settles its result. */
export class RunRecorder {
  readonly output: RunOutput;
  readonly startedAt: number;
  #lastCounters = "";

  constructor(readonly context: RecorderContext) {
    this.output = new RunOutput(context.maxTextChars);
    this.startedAt = context.clock.now();
  }

  /** Hands an event to the consumer; a consumer's failure is logged, never thrown. */
  emit(event: AgentEvent): void {
    try {
      this.context.onEvent?.(event);
    } catch (err) {
      this.context.log.warn("{agent}: event handler failed: {error}", {
        agent: this.context.id.agent,
        error: String(err),
      });
    }
  }

  /** Books parsed items into the output and passes them on as events. */
  absorb(parsed: ParsedLine[]): void {
    const { output } = this;
    const agent = this.context.id.agent;
    let countersMoved = false;
    for (const item of parsed) {
      switch (item.type) {
        case "text": {
          const kept = output.addText(item.text);
          if (kept) this.emit({ type: "text", agent, text: kept });
          countersMoved = true;
          break;
        }
        case "activity":
          output.activities++;
          this.emit({ type: "activity", agent, text: item.text });
          break;
        case "usage":
          output.reportedInput = item.inputTokens ?? output.reportedInput;
          output.reportedOutput = item.outputTokens ?? output.reportedOutput;
          output.reportedCost = item.costUsd ?? output.reportedCost;
          output.reportedCacheRead = item.cacheReadTokens ?? output.reportedCacheRead;
          output.reportedCacheWrite = item.cacheWriteTokens ?? output.reportedCacheWrite;
          countersMoved = true;
          break;
        case "final":
          output.final = { text: item.text, error: item.error };
          break;
        case "retry": {
          const { type: _, ...retry } = item;
          this.emit({ type: "retry", agent, ...retry });
          break;
        }
        case "invalid":
          output.invalidLines++;
          output.lastInvalid = JSON.stringify(oneLine(item.line, 80));
          break;
      }
    }
    if (countersMoved) this.#countersMoved();
  }

  #countersMoved(): void {
    const counters = runningCounters(this.output, this.context.promptChars);
    const key = `${counters.inputTokens}/${counters.outputTokens}`;
    if (key === this.#lastCounters) return;
    this.#lastCounters = key;
    const elapsedMs = this.context.clock.now() - this.startedAt;
    this.emit({ type: "usage", agent: this.context.id.agent, ...counters, elapsedMs });
  }

  /** The run's result (failed when `reason` is given), logged and passed on as `finished`. */
  finish(end: RunEnd, reason: string | undefined): AgentResult {
    const { id, clock, prices, promptChars } = this.context;
    const { output } = this;
    const result: AgentResult = {
      ...id,
      ok: reason === undefined,
      text: output.answer,
      ...(reason !== undefined ? { error: `${id.agent}: ${reason}` } : {}),
      exitCode: end.exitCode,
      timedOut: end.timedOut,
      aborted: end.aborted,
      durationMs: clock.now() - this.startedAt,
      usage: settleUsage(output, promptChars, id.model, prices, reason === undefined),
      ...(output.truncated || end.droppedLines > 0 ? { truncated: true } : {}),
    };
    return this.#settled(result);
  }

  /** A run that failed before producing anything. */
  fail(reason: string, aborted = false): AgentResult {
    const durationMs = this.context.clock.now() - this.startedAt;
    return this.#settled(
      failedResult(this.context.id, `${this.context.id.agent}: ${reason}`, { aborted, durationMs }),
    );
  }

  #settled(result: AgentResult): AgentResult {
    // Failures reach warn through the caller (the council), which says what it does next.
    if (result.ok) {
      this.context.log.debug("{agent} finished in {ms} ms", {
        agent: result.agent,
        ms: result.durationMs,
      });
    } else this.context.log.debug("{error}", { error: result.error });
    this.emit({ type: "finished", agent: result.agent, result });
    return result;
  }
}

/** What a runner gives every recorder. */
export interface RecorderSettings {
  clock: Clock;
  prices: Readonly<PriceTable>;
  maxTextChars: number;
  logFor(turnId?: string): Logger;
}

/** A prepared run that can only fail: the child could not start. */
export function unstartableRun(
  settings: RecorderSettings,
  id: RunIdentity,
  reason: string,
): PreparedRun {
  return {
    agent: id.agent,
    run(prompt, options = {}) {
      const recorder = new RunRecorder({
        ...settings,
        id,
        promptChars: promptText(prompt).length,
        log: settings.logFor(options.turnId),
        onEvent: options.onEvent,
      });
      return Promise.resolve(recorder.fail(reason, options.signal?.aborted ?? false));
    },
    discard: () => Promise.resolve(),
  };
}

/** "5s", "1.5s". */
export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
