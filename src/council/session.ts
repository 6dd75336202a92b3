/**
 * Per-session counters (SPEC §2.4): turns run and USD spent, in a bounded LRU map.
 */

export interface Session {
  /** SHA-256 hex of system prompt + first user message. */
  key: string;
  turns: number;
  usd: number;
}

/** Why a session may not run another council turn. */
export type SessionCap =
  | { kind: "turns"; turns: number; maxTurns: number }
  | { kind: "spend"; usd: number; maxSessionUsd: number };

export interface SessionLimits {
  maxTurns: number;
  /** 0 = no spend cap. */
  maxSessionUsd: number;
}

/** The cap a session has reached, or undefined when it may run another turn. */
export function sessionCap(session: Session, limits: SessionLimits): SessionCap | undefined {
  if (session.turns >= limits.maxTurns) {
    return { kind: "turns", turns: session.turns, maxTurns: limits.maxTurns };
  }
  if (limits.maxSessionUsd > 0 && session.usd >= limits.maxSessionUsd) {
    return { kind: "spend", usd: session.usd, maxSessionUsd: limits.maxSessionUsd };
  }
  return undefined;
}

/**
 * Sessions by key, least recently used evicted beyond `capacity`. A Map keeps insertion order,
 * so re-inserting on use makes the first key the least recently used.
 */
export class SessionStore {
  readonly capacity: number;
  #sessions = new Map<string, Session>();

  constructor(capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`session capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The session for a key (created empty when new), marked most recently used. */
  touch(key: string): Session {
    const session = this.#sessions.get(key) ?? { key, turns: 0, usd: 0 };
    this.#put(session);
    return session;
  }

  /** Reads without creating or reordering. */
  peek(key: string): Readonly<Session> | undefined {
    return this.#sessions.get(key);
  }

  /** Counts a turn that is about to run. */
  startTurn(key: string): Session {
    const session = this.touch(key);
    session.turns++;
    return session;
  }

  /** Adds a finished turn's spend; returns the session's cumulative USD. */
  addSpend(key: string, usd: number): number {
    const session = this.touch(key);
    session.usd += usd;
    return session.usd;
  }

  /** Replaces a session's counters (e.g. rebuilt from a ledger at start-up). */
  restore(session: Session): void {
    this.#put({ key: session.key, turns: session.turns, usd: session.usd });
  }

  /** All sessions, least recently used first (copies). */
  entries(): Session[] {
    return [...this.#sessions.values()].map((s) => ({ ...s }));
  }

  #put(session: Session): void {
    this.#sessions.delete(session.key);
    this.#sessions.set(session.key, session);
    while (this.#sessions.size > this.capacity) {
      const oldest = this.#sessions.keys().next().value as string;
      this.#sessions.delete(oldest);
    }
  }
}
