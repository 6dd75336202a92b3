/**
 * Progress narration (CONTRACT.md §6.3): line formats, and a per-turn narrator that turns agent events
 * into progress lines with throttled telemetry and a heartbeat on an injectable clock.
 */
import type { Clock, TimerId } from "../../base/clock.ts";
import type { AgentEvent, AgentResult, UpstreamRetry } from "../../agents/types.ts";
import { oneLine } from "../../base/text.ts";
import type { TurnSynthesis } from "../records.ts";

export type LineLevel = "warn" | "info" | "debug";
/** Where narrated lines go (the turn decides whether they still reach the progress channel). */
type EmitLine = (line: string, level: LineLevel) => void;

/** 950 → "950", 1234 → "1.2k", 56789 → "57k", 1234567 → "1.2M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Whole seconds for running counters: "12s". */
function wholeSeconds(ms: number): string {
  return `${Math.floor(Math.max(0, ms) / 1000)}s`;
}

/** Tenths of a second for durations: "41.2s". */
export function tenthSeconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
}

export function formatUsd(usd: number): string {
  return `$${usd.toFixed(4)}`;
}

export function telemetryLine(label: string, tokens: number, elapsedMs: number): string {
  return `${label}: ~${formatTokens(tokens)} tok · ${wholeSeconds(elapsedMs)}`;
}

export function heartbeatLine(elapsedMs: number, waitingOn: readonly string[]): string {
  const waiting = waitingOn.length ? ` (waiting on: ${waitingOn.join(", ")})` : "";
  return `still working — ${wholeSeconds(elapsedMs)} elapsed${waiting}`;
}

/**
 * A failed call's error without the agent name the runner puts in front of it (the line that
 * shows it already starts with the call's label).
 */
export function errorOf(result: Pick<AgentResult, "agent" | "error">): string | undefined {
  const error = result.error;
  if (error === undefined) return undefined;
  const prefix = `${result.agent}: `;
  return error.startsWith(prefix) && error.length > prefix.length
    ? error.slice(prefix.length)
    : error;
}

/** A call's closing line: duration, tokens and cost, or its error. */
export function finishLine(label: string, result: AgentResult): string {
  const took = tenthSeconds(result.durationMs);
  if (result.aborted) return `${label}: cancelled after ${took}`;
  if (!result.ok) {
    const error = errorOf(result);
    const why = error ? oneLine(error) : "failed without an error message";
    return `${label}: failed after ${took} — ${why}`;
  }
  const { inputTokens, outputTokens, costUsd, estimated } = result.usage;
  const tokens = `${formatTokens(inputTokens)} in / ${formatTokens(outputTokens)} out`;
  const cost = `${estimated ? "~" : ""}${formatUsd(costUsd)}`;
  const empty = result.text.trim() ? "" : " · empty reply";
  return `${label}: done in ${took} · ${tokens} · ${cost}${empty}`;
}

/** A call the council ended early: `gemini cut off after 9.1s`. */
export function cutOffLine(label: string, durationMs: number): string {
  return `${label} cut off after ${tenthSeconds(durationMs)}`;
}

/** `claude: upstream retry 2/10 (529 overloaded)` */
function retryLine(label: string, retry: UpstreamRetry): string {
  const count = retry.attempt === undefined
    ? ""
    : ` ${retry.attempt}${retry.maxAttempts === undefined ? "" : `/${retry.maxAttempts}`}`;
  return `${label}: upstream retry${count}${retry.reason ? ` (${oneLine(retry.reason)})` : ""}`;
}

/**
 * `picked codex's answer`, or `writing the answer from 3 candidates` while the synthesizer still
 * writes (`now`) and `wrote …` once it is done (`past`).
 */
export function synthesisNote(synthesis: TurnSynthesis, tense: "now" | "past"): string {
  if (synthesis.kind === "picked") return `picked ${synthesis.picked}'s answer`;
  const n = synthesis.candidates;
  return `${tense === "now" ? "writing" : "wrote"} the answer from ${n} candidate${
    n === 1 ? "" : "s"
  }`;
}

/** `council: 3 agents (claude, codex, gemini) · 41.2s · 4 calls · $0.1234` */
export function recapLine(
  agents: readonly string[],
  wallMs: number,
  calls: number,
  usd: number,
): string {
  const n = agents.length;
  return `council: ${n} agent${n === 1 ? "" : "s"} (${agents.join(", ")}) · ${
    tenthSeconds(wallMs)
  } · ${calls} call${calls === 1 ? "" : "s"} · ${formatUsd(usd)}`;
}

interface Tracked {
  label: string;
  startedAt: number;
  running: boolean;
  /** Tokens as last reported (or estimated from text when a CLI reports none). */
  tokens: number;
  reportedTokens: boolean;
  textChars: number;
  /** Tokens shown in the last telemetry line, to skip unchanged counters. */
  shownTokens: number;
  /** Partial line of child text awaiting its newline (interleaved mode). */
  pending: string;
  interleave: boolean;
}

interface NarratorOptions {
  clock: Clock;
  telemetryMs: number;
  heartbeatMs: number;
  /** `progressDetail: interleaved`: child text goes to progress, line by line. */
  interleaved: boolean;
  emit: EmitLine;
}

/** The narrator's handle on one agent call. */
interface CallTracker {
  onEvent(event: AgentEvent): void;
  /** Closes the call; `cutOff` says why the council ended it early (replaces its finish line). */
  finished(result: AgentResult, cutOff?: string): void;
}

/** Child text lines longer than this are cut into pieces rather than buffered without end. */
const MAX_PENDING = 400;

/** Narrates one turn's agent calls. `start` arms the timers; `stop` clears every one. */
export class Narrator {
  #options: NarratorOptions;
  #calls: Tracked[] = [];
  #turnStartedAt: number;
  #timers: TimerId[] = [];

  constructor(options: NarratorOptions) {
    this.#options = options;
    this.#turnStartedAt = options.clock.now();
  }

  start(): void {
    const { clock, telemetryMs, heartbeatMs } = this.#options;
    this.#timers.push(clock.setInterval(() => this.#telemetry(), telemetryMs));
    this.#timers.push(clock.setInterval(() => this.#heartbeat(), heartbeatMs));
  }

  stop(): void {
    for (const id of this.#timers) this.#options.clock.clearInterval(id);
    this.#timers = [];
  }

  /** Labels of calls still running, in start order. */
  waitingOn(): string[] {
    return this.#calls.filter((c) => c.running).map((c) => c.label);
  }

  /**
   * Registers a call. `interleave` = this call's text may go to progress (never for a call
   * whose text is the answer). `finished` closes it even when the runner sent no `finished`.
   */
  track(label: string, interleave: boolean): CallTracker {
    const call: Tracked = {
      label,
      startedAt: this.#options.clock.now(),
      running: true,
      tokens: 0,
      reportedTokens: false,
      textChars: 0,
      shownTokens: 0,
      pending: "",
      interleave: interleave && this.#options.interleaved,
    };
    this.#calls.push(call);
    return {
      onEvent: (event) => this.#onEvent(call, event),
      finished: (result, cutOff) => {
        if (cutOff === undefined) {
          this.#onEvent(call, { type: "finished", agent: result.agent, result });
        } else this.#cutOff(call, result, cutOff);
      },
    };
  }

  #onEvent(call: Tracked, event: AgentEvent): void {
    const emit = this.#options.emit;
    switch (event.type) {
      case "started":
        emit(`${call.label}: started (${event.model})`, "debug");
        break;
      case "activity":
        emit(`${call.label}: ${oneLine(event.text)}`, "debug");
        break;
      case "usage":
        call.tokens = event.inputTokens + event.outputTokens;
        call.reportedTokens = true;
        break;
      case "text":
        call.textChars += event.text.length;
        if (!call.reportedTokens) call.tokens = Math.ceil(call.textChars / 4);
        if (call.interleave) this.#interleave(call, event.text);
        break;
      case "retry":
        emit(retryLine(call.label, event), "debug");
        break;
      case "finished":
        if (!call.running) return;
        call.running = false;
        if (call.interleave) this.#flush(call);
        // A failure is logged here, once, at warn (the turn does not log it again).
        emit(
          finishLine(call.label, event.result),
          event.result.ok || event.result.aborted ? "info" : "warn",
        );
        break;
    }
  }

  #cutOff(call: Tracked, result: AgentResult, why: string): void {
    if (!call.running) return;
    call.running = false;
    if (call.interleave) this.#flush(call);
    this.#options.emit(`${cutOffLine(call.label, result.durationMs)} — ${why}`, "info");
  }

  #interleave(call: Tracked, text: string): void {
    call.pending += text;
    let newline = call.pending.search(/\r?\n/);
    while (newline >= 0 || call.pending.length > MAX_PENDING) {
      const cut = newline >= 0 ? newline : MAX_PENDING;
      this.#say(call, call.pending.slice(0, cut));
      call.pending = call.pending.slice(cut).replace(/^\r?\n/, "");
      newline = call.pending.search(/\r?\n/);
    }
  }

  #flush(call: Tracked): void {
    this.#say(call, call.pending);
    call.pending = "";
  }

  #say(call: Tracked, line: string): void {
    if (line.trim()) this.#options.emit(`${call.label}: ${line.trimEnd()}`, "debug");
  }

  #telemetry(): void {
    const now = this.#options.clock.now();
    for (const call of this.#calls) {
      if (!call.running || call.tokens === call.shownTokens) continue;
      call.shownTokens = call.tokens;
      this.#options.emit(telemetryLine(call.label, call.tokens, now - call.startedAt), "debug");
    }
  }

  #heartbeat(): void {
    const waiting = this.waitingOn();
    if (waiting.length === 0) return;
    const elapsed = this.#options.clock.now() - this.#turnStartedAt;
    this.#options.emit(heartbeatLine(elapsed, waiting), "debug");
  }
}
