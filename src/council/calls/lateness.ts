/**
 * Each agent's usual lateness behind the quorum on fanned-out turns, and the grace a straggler
 * gets from it: a high percentile of its recent lateness with a margin, clamped; an agent with
 * too little history gets the configured default. Its latest call bounds the grace too: the
 * lateness it just showed, with the margin, or after a grace it missed, the longest grace: a slow
 * agent then answers within it at its own pace (a grace costs only while nothing answers), and
 * one that does not answer even within that is taken for hanging (calls.ts). So is one cut at
 * the quorum without a grace after a failure. The longest grace defaults to the default grace:
 * learning then only shortens the wait.
 */

export interface GraceSettings {
  /** The grace of an agent without enough history. */
  defaultMs: number;
  /** The longest grace any history earns. */
  maxMs: number;
}

/** Recent lateness samples kept per agent. */
export const LATENESS_WINDOW = 20;
/** Samples an agent needs before its own history sets its grace. */
export const MIN_SAMPLES = 3;
/** The shortest learned grace: a usually punctual agent still gets room for jitter. */
export const MIN_GRACE_MS = 1000;
const PERCENTILE = 0.9;
const MARGIN = 1.5;

/** Lateness samples per agent (ms behind the quorum; 0 when in before it), oldest first. */
export type LatenessHistory = Record<string, number[]>;

/** The grace earned by `samples`, or the default when there are too few. */
export function graceFrom(samples: readonly number[], settings: GraceSettings): number {
  if (samples.length < MIN_SAMPLES) return settings.defaultMs;
  const sorted = [...samples].sort((a, b) => a - b);
  const high = sorted[Math.min(sorted.length - 1, Math.ceil(PERCENTILE * sorted.length) - 1)];
  const bound = Math.max(MIN_GRACE_MS, Math.round(high * MARGIN));
  return Math.min(settings.maxMs, bound);
}

/** The history as read from a file: anything malformed is left out. */
export function parseHistory(value: unknown): LatenessHistory {
  if (!value || typeof value !== "object" || Array.isArray(value)) return {};
  const history: LatenessHistory = {};
  for (const [agent, samples] of Object.entries(value)) {
    if (!Array.isArray(samples)) continue;
    const valid = samples.filter((s): s is number => Number.isFinite(s) && s >= 0);
    if (valid.length) history[agent] = valid.slice(-LATENESS_WINDOW);
  }
  return history;
}

/** Where the history is kept between runs of the gateway. */
export interface LatenessStore {
  load(): LatenessHistory;
  save(history: LatenessHistory): void;
}

/** The agents' lateness, learned across turns (and gateway runs, with a store). */
export class Lateness {
  #settings: GraceSettings;
  #history: LatenessHistory;
  #store: LatenessStore | undefined;
  #changed = false;
  /** The bound each agent's latest call sets (kept in memory only: a restart goes by history). */
  #latest = new Map<string, number>();

  constructor(settings: GraceSettings, store?: LatenessStore) {
    this.#settings = settings;
    this.#store = store;
    this.#history = store ? parseHistory(store.load()) : {};
  }

  /** The grace a straggler of `agent` gets once the quorum is in. */
  graceFor(agent: string): number {
    const fromHistory = graceFrom(this.#history[agent] ?? [], this.#settings);
    const latest = this.#latest.get(agent) ?? 0;
    return Math.min(this.#settings.maxMs, Math.max(fromHistory, latest));
  }

  /** The longest grace any agent gets. */
  get longestMs(): number {
    return this.#settings.maxMs;
  }

  /** One call of `agent` answered `lateMs` behind the quorum (0: in before it). */
  record(agent: string, lateMs: number): void {
    const late = this.#add(agent, lateMs);
    this.#latest.set(agent, Math.round(late * MARGIN));
  }

  /**
   * A straggler of `agent` was cut at the end of its `graceMs` without answering: it is at least
   * that late (a sample of its history), and its next grace is the longest.
   */
  missed(agent: string, graceMs: number): void {
    this.#add(agent, graceMs);
    this.#latest.set(agent, this.#settings.maxMs);
  }

  /**
   * A straggler of `agent` was cut at the quorum without a grace (its last call had failed): it
   * showed no lateness, and its next grace is the longest, its fair chance.
   */
  cutWithoutGrace(agent: string): void {
    this.#latest.set(agent, this.#settings.maxMs);
  }

  #add(agent: string, lateMs: number): number {
    const late = Math.max(0, Math.round(lateMs));
    this.#history[agent] = [...this.#history[agent] ?? [], late].slice(-LATENESS_WINDOW);
    this.#changed = true;
    return late;
  }

  /** Writes what changed since the last save to the store, if there is one. Never throws. */
  save(): void {
    if (!this.#changed || !this.#store) return;
    this.#changed = false;
    try {
      this.#store.save(this.#history);
    } catch {
      // A history that cannot be kept is only learned again; the turn goes on.
    }
  }

  history(): LatenessHistory {
    return structuredClone(this.#history);
  }
}
