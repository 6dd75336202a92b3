/**
 * Agent health: each agent's run of failed calls, and the cool-down during which an agent that
 * kept failing is skipped. Lives as long as the council; `status()` is the read API for
 * `doctor` and status reports.
 */
import type { Clock } from "../../base/clock.ts";

interface HealthSettings {
  /** Failed calls in a row that start a cool-down (0 = never skip an agent). */
  failures: number;
  /** How long an agent is skipped once it has failed `failures` times in a row. */
  cooldownMs: number;
}

/**
 * How one call counts: `neutral` = it tells nothing (cancelled); `missed` = it was cut off at the
 * end of the quorum's grace without answering and without showing a failure, which counts as one
 * only the second time in a row (a hanging upstream, or one failing after a long wait, shows
 * nothing else; a slow agent that misses every grace only costs and never counts).
 */
export type CallVerdict =
  | { kind: "ok" }
  | { kind: "failed"; reason: string }
  | { kind: "missed"; reason: string }
  | { kind: "neutral" };

/** Misses in a row that count as a failure. */
const MISSES_AS_FAILURE = 2;

/** One agent as status reports show it. */
export interface AgentHealthStatus {
  agent: string;
  state: "healthy" | "failing" | "cooling-down";
  /** Failed calls in a row (0 after any success). */
  failuresInRow: number;
  /** The last failure's reason, while failures are in a row. */
  lastError?: string;
  /** When the current cool-down ends (epoch ms), while cooling down. */
  coolingUntil?: number;
}

interface Entry {
  failuresInRow: number;
  lastError?: string;
  coolingUntil?: number;
}

export class AgentHealth {
  #settings: HealthSettings;
  #clock: Clock;
  #agents = new Map<string, Entry>();
  /** Calls in a row cut off at the grace's end unanswered, per agent (not yet a failure). */
  #misses = new Map<string, number>();

  constructor(settings: HealthSettings, clock: Clock) {
    this.#settings = settings;
    this.#clock = clock;
  }

  /** Books one finished call. A failure at or past the limit (re)starts the cool-down. */
  record(agent: string, verdict: CallVerdict): void {
    if (verdict.kind === "neutral") return;
    if (verdict.kind === "missed") {
      const misses = (this.#misses.get(agent) ?? 0) + 1;
      this.#misses.set(agent, misses);
      if (misses < MISSES_AS_FAILURE) return;
      verdict = { kind: "failed", reason: `${verdict.reason} (${misses} turns in a row)` };
    } else this.#misses.delete(agent);
    if (verdict.kind === "ok") {
      this.#agents.delete(agent);
      return;
    }
    const entry = this.#agents.get(agent) ?? { failuresInRow: 0 };
    entry.failuresInRow++;
    entry.lastError = verdict.reason;
    const { failures, cooldownMs } = this.#settings;
    if (failures > 0 && entry.failuresInRow >= failures) {
      entry.coolingUntil = this.#clock.now() + cooldownMs;
    }
    this.#agents.set(agent, entry);
  }

  /**
   * Takes over a cool-down another replica of a team started (its status read from the shared
   * store): the agent is skipped here too until then. A longer local cool-down stays.
   */
  adopt(status: AgentHealthStatus): void {
    const until = status.coolingUntil;
    if (until === undefined || until <= this.#clock.now()) return;
    const entry = this.#agents.get(status.agent) ?? { failuresInRow: 0 };
    if ((entry.coolingUntil ?? 0) >= until) return;
    entry.failuresInRow = Math.max(entry.failuresInRow, status.failuresInRow);
    entry.lastError = status.lastError ?? entry.lastError;
    entry.coolingUntil = until;
    this.#agents.set(status.agent, entry);
  }

  /** The agent's status while it is cooling down, else undefined. */
  coolingDown(agent: string): AgentHealthStatus | undefined {
    const status = this.statusOf(agent);
    return status.state === "cooling-down" ? status : undefined;
  }

  statusOf(agent: string): AgentHealthStatus {
    const entry = this.#agents.get(agent);
    if (!entry) return { agent, state: "healthy", failuresInRow: 0 };
    const cooling = entry.coolingUntil !== undefined && entry.coolingUntil > this.#clock.now();
    return {
      agent,
      state: cooling ? "cooling-down" : "failing",
      failuresInRow: entry.failuresInRow,
      ...(entry.lastError !== undefined ? { lastError: entry.lastError } : {}),
      ...(cooling ? { coolingUntil: entry.coolingUntil } : {}),
    };
  }

  /** Every agent with failures on record, in the order they first failed. */
  status(): AgentHealthStatus[] {
    return [...this.#agents.keys()].map((agent) => this.statusOf(agent));
  }
}
