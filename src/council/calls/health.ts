/**
 * Agent health: each agent's run of failed calls, the cool-down during which an agent that kept
 * failing is skipped, and apart from them its run of calls cut off unanswered (slowness, never a
 * failure by itself). Lives as long as the council; `status()` is the read API for `doctor` and
 * status reports.
 */
import type { Clock } from "../../base/clock.ts";

interface HealthSettings {
  /** Failed calls in a row that start a cool-down (0 = never skip an agent). */
  failures: number;
  /** How long an agent is skipped once it has failed `failures` times in a row. */
  cooldownMs: number;
}

/**
 * How one call counts: `neutral` = it tells nothing (cancelled, or cut because the other children
 * already decided the turn); `missed` = it was cut unanswered without showing a failure: at the
 * end of its grace, or at the quorum while a suspect (calls.ts decides which misses are failures
 * instead). A miss never counts as a failure: it ends a suspicion and is shown as slowness.
 */
export type CallVerdict =
  | { kind: "ok" }
  /** `hang`: unanswered within the longest grace; it cools the agent down at once. */
  | { kind: "failed"; reason: string; hang?: boolean }
  | { kind: "missed"; reason: string }
  | { kind: "neutral" };

/** One agent as status reports show it. */
export interface AgentHealthStatus {
  agent: string;
  state: "healthy" | "failing" | "cooling-down";
  /** Failed calls in a row (0 after any success). */
  failuresInRow: number;
  /** Calls in a row cut off unanswered without a failure (slowness; absent when none). */
  missesInRow?: number;
  /** The last failure's reason, while failures are in a row. */
  lastError?: string;
  /** When the current cool-down ends (epoch ms), while cooling down. */
  coolingUntil?: number;
  /** Back from a cool-down for lateness: not waited for past the quorum (see `onProbation`). */
  probation?: true;
}

interface Entry {
  failuresInRow: number;
  missesInRow: number;
  lastError?: string;
  coolingUntil?: number;
  /** Its last call failed and it has not had its next chance yet: no grace at the quorum. */
  suspect: boolean;
  /** Cool-downs since its last answer: each one after the first lasts twice the one before. */
  cooldowns: number;
  /**
   * Its cool-down came from not answering within the longest grace: once over, its calls are not
   * waited for past the quorum until one shows whether it keeps up (see `onProbation`).
   */
  probation: boolean;
}

function newEntry(): Entry {
  return { failuresInRow: 0, missesInRow: 0, suspect: false, cooldowns: 0, probation: false };
}

/** A cool-down grows to at most this many times `cooldownMs` while an agent keeps failing. */
const MAX_COOLDOWN_FACTOR = 16;

export class AgentHealth {
  #settings: HealthSettings;
  #clock: Clock;
  #agents = new Map<string, Entry>();

  constructor(settings: HealthSettings, clock: Clock) {
    this.#settings = settings;
    this.#clock = clock;
  }

  /**
   * Books one finished call. A failure at or past the limit, or a hang, (re)starts the cool-down
   * (twice as long as the last, up to 16 × `cooldownMs`, until the agent answers again), after
   * which the agent's first call gets its grace (after a hang: runs on probation, `onProbation`);
   * a failure short of it makes the agent a suspect, cut at the next quorum without grace once
   * (booked a miss, so the call after it gets a grace).
   */
  record(agent: string, verdict: CallVerdict): void {
    if (verdict.kind === "neutral") return;
    if (verdict.kind === "ok") {
      this.#agents.delete(agent);
      return;
    }
    const entry = this.#agents.get(agent) ?? newEntry();
    this.#agents.set(agent, entry);
    entry.suspect = false;
    if (verdict.kind === "missed") {
      entry.missesInRow++;
      return;
    }
    entry.missesInRow = 0;
    entry.failuresInRow++;
    entry.lastError = verdict.reason;
    const { failures, cooldownMs } = this.#settings;
    if (failures > 0 && (entry.failuresInRow >= failures || verdict.hang)) {
      // An agent failing again on its chance after a cool-down (a vendor still down, a member too
      // slow for the grace) is tried ever less often, as a circuit breaker backs off.
      const factor = Math.min(MAX_COOLDOWN_FACTOR, 2 ** entry.cooldowns);
      entry.coolingUntil = this.#clock.now() + cooldownMs * factor;
      entry.cooldowns++;
      entry.probation = verdict.hang === true;
    } else {
      entry.suspect = true;
      entry.probation = false;
    }
  }

  /** Whether a straggler of `agent` is cut at the quorum without grace (see `record`). */
  suspect(agent: string): boolean {
    return this.#agents.get(agent)?.suspect === true;
  }

  /**
   * Whether `agent` is back from a cool-down for lateness and has not yet shown whether it keeps
   * up: the council then does not hold a turn for it past the quorum, but lets it run on while the
   * turn goes on, up to its grace (children.ts). Waiting a grace for it on each chance cost every
   * such turn that grace, for a member that most likely is as slow as before.
   */
  onProbation(agent: string): boolean {
    const entry = this.#agents.get(agent);
    if (!entry?.probation) return false;
    return entry.coolingUntil === undefined || entry.coolingUntil <= this.#clock.now();
  }

  /**
   * Takes over a cool-down another replica of a team started (its status read from the shared
   * store): the agent is skipped here too until then. A longer local cool-down stays.
   */
  adopt(status: AgentHealthStatus): void {
    const until = status.coolingUntil;
    if (until === undefined || until <= this.#clock.now()) return;
    const entry = this.#agents.get(status.agent) ?? newEntry();
    if ((entry.coolingUntil ?? 0) >= until) return;
    entry.failuresInRow = Math.max(entry.failuresInRow, status.failuresInRow);
    entry.lastError = status.lastError ?? entry.lastError;
    entry.coolingUntil = until;
    // As after a cool-down of its own, the agent's first call after it gets its grace.
    entry.suspect = false;
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
    const failing = entry.failuresInRow > 0;
    return {
      agent,
      state: cooling ? "cooling-down" : failing ? "failing" : "healthy",
      failuresInRow: entry.failuresInRow,
      ...(entry.missesInRow > 0 ? { missesInRow: entry.missesInRow } : {}),
      ...(entry.lastError !== undefined ? { lastError: entry.lastError } : {}),
      ...(cooling ? { coolingUntil: entry.coolingUntil } : {}),
      ...(!cooling && entry.probation ? { probation: true as const } : {}),
    };
  }

  /** Every agent with failures or misses on record, in the order they first had one. */
  status(): AgentHealthStatus[] {
    return [...this.#agents.keys()].map((agent) => this.statusOf(agent));
  }
}
