/**
 * The status document `GET /v1/council/status` answers with (and the dashboard's SSE stream
 * repeats): live turns, recent turns, per-agent figures and spend. Times are ISO 8601 (UTC),
 * durations milliseconds, money USD.
 */
import type { AgentRole } from "../agents/types.ts";
import type { TurnDecision } from "../council/records.ts";
import type { SeatFigures } from "./seat_records.ts";

/** A call's state: running, or how it ended. */
export type CallState = "running" | "done" | "failed" | "timed-out" | "cancelled";

export interface CallStatus {
  /** `claude`, `claude#2`, `claude (synth)`, `judge`. */
  label: string;
  agent: string;
  role: AgentRole;
  model: string;
  state: CallState;
  /** Running: time so far; ended: the call's duration. */
  elapsedMs: number;
  inputTokens: number;
  outputTokens: number;
  /** Input plus output tokens; while running, as last reported or estimated from text. */
  tokens: number;
  /** Known once the call has ended (0 before). */
  costUsd: number;
  /** The tokens or cost are estimated, not reported by the agent. */
  estimated: boolean;
  /** The last thing the agent did, e.g. `Read notes.txt` (running calls only). */
  activity?: string;
}

interface TurnStatusBase {
  turn: string;
  /** The session key (SHA-256 hex). */
  session: string;
  /** The model the host asked for. */
  model: string;
  kind: "answer" | "action";
  continuation: boolean;
  startedAt: string;
  /** Undefined until the turn is planned. */
  decision?: TurnDecision;
  calls: CallStatus[];
}

export interface LiveTurn extends TurnStatusBase {
  elapsedMs: number;
  /** Cost of the calls ended so far. */
  usd: number;
}

export interface RecentTurn extends TurnStatusBase {
  endedAt: string;
  wallMs: number;
  outcome: "answer" | "tool";
  failed: boolean;
  cancelled: boolean;
  /** Whether it counted toward the session's turn cap (not when capped or agentless). */
  counted: boolean;
  usd: number;
  inputTokens: number;
  outputTokens: number;
}

export interface AgentFigures {
  agent: string;
  /** Every call since start (children, synthesis, judge). */
  calls: number;
  /** Calls that failed or timed out (cancelled ones are not failures). */
  failures: number;
  cancelled: number;
  /** Median duration of the agent's recent calls (see `LATENCY_WINDOW`); null before any. */
  medianMs: number | null;
  /** Action turns where a synthesizer chose among proposals that included this agent's. */
  candidates: number;
  /** How often the synthesizer chose this agent's proposal. */
  chosen: number;
  inputTokens: number;
  outputTokens: number;
  usd: number;
  /** Whether the council skips the agent now, and why. */
  health: AgentHealthView;
  /** What it does for the council over the document's window (`?window=`, default all). */
  seat?: SeatFigures;
}

/** An agent's health as the council reports it, read through a callback given at wiring time. */
export interface AgentHealthReading {
  agent: string;
  state: "healthy" | "failing" | "cooling-down";
  failuresInRow: number;
  /** Calls in a row cut off unanswered without a failure (absent: none). */
  missesInRow?: number;
  lastError?: string;
  /** Epoch ms, while cooling down. */
  coolingUntil?: number;
  /** Back from a cool-down for lateness, not waited for past the quorum (absent: not). */
  probation?: true;
}

/**
 * An agent's health in the document: `failing` after a failed call, `cooling-down` (skipped by
 * the council) once `health.failures` calls in a row failed, `healthy` again after a success.
 * Graces missed (slowness) are counted apart and never make an agent failing.
 */
export interface AgentHealthView {
  state: AgentHealthReading["state"];
  /** Failed calls in a row (0 after any success). */
  failuresInRow: number;
  /** Calls in a row cut off unanswered at the quorum without a failure (0 after an answer). */
  missesInRow: number;
  /** The last failure's reason (one line), while failures are in a row; else null. */
  lastError: string | null;
  /** When the cool-down ends, while cooling down; else null. */
  coolingUntil: string | null;
  /**
   * Back from a cool-down for not answering within the longest grace: until a call shows it keeps
   * up, the council does not wait for it past the quorum.
   */
  probation: boolean;
  /** Time left of the cool-down, while cooling down; else null. */
  coolingLeftMs: number | null;
}

interface SpendMinute {
  /** Start of the minute. */
  minute: string;
  usd: number;
  turns: number;
}

export interface SpendFigures {
  /** Since start. */
  usd: number;
  turns: number;
  calls: number;
  /** Minutes with spend or turns, oldest first, over the last `SPEND_WINDOW_MINUTES`. */
  perMinute: SpendMinute[];
}

/** One session as the status line needs it. */
export interface SessionStatus {
  session: string;
  /** Turns and spend as of its last finished turn, plus the live turn's spend so far. */
  turns: number;
  usd: number;
  live: LiveTurn | null;
  last: RecentTurn | null;
}

export interface StatusDocument {
  version: string;
  now: string;
  startedAt: string;
  uptimeMs: number;
  /** The configuration file in use, or null for defaults and SVC_* variables. */
  configPath: string | null;
  live: LiveTurn[];
  /** The last `RECENT_TURNS` finished turns, newest first. */
  recent: RecentTurn[];
  agents: AgentFigures[];
  spend: SpendFigures;
  /** Only when asked for one session (`?session=`). */
  session?: SessionStatus | null;
}
