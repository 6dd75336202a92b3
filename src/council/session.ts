/**
 * Per-session counters (CONTRACT.md §2.4): turns run and USD spent, in a bounded LRU map, where a
 * running turn holds a spend reservation so concurrent turns of one session keep to its cap.
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

/** Sums of float dollars drift: a millionth of a cent short of the cap is at the cap. */
const USD_EPSILON = 1e-8;

/** The cap a session has reached, or undefined when it may run another turn. */
export function sessionCap(session: Session, limits: SessionLimits): SessionCap | undefined {
  if (session.turns >= limits.maxTurns) {
    return { kind: "turns", turns: session.turns, maxTurns: limits.maxTurns };
  }
  if (limits.maxSessionUsd > 0 && session.usd >= limits.maxSessionUsd - USD_EPSILON) {
    return { kind: "spend", usd: session.usd, maxSessionUsd: limits.maxSessionUsd };
  }
  return undefined;
}

/** An admitted turn's claim on its session: counted, with its spend reserved until it settles. */
export interface Ticket {
  readonly key: string;
  readonly reservedUsd: number;
}

/** Whether a turn may run now. */
export type Admission =
  | { kind: "run"; ticket: Ticket }
  | { kind: "capped"; cap: SessionCap }
  /**
   * The spend reserved by the session's running turns leaves no room under its cap: ask again
   * once `settled` resolves (when one of them settles).
   */
  | { kind: "wait"; running: number; settled: Promise<void> };

/**
 * What a turn needs of its session's counters: the in-memory SessionStore, or a store shared by
 * several replicas (whose admission asks the database, so it may be async).
 */
export interface Sessions {
  load(key: string): Promise<void>;
  admit(key: string, limits: SessionLimits): Admission | Promise<Admission>;
  settle(ticket: Ticket, usd: number): Readonly<Session>;
  withdraw(ticket: Ticket): void;
  peek(key: string): Readonly<Session> | undefined;
}

/** Finds an evicted session's counters again (in a ledger); undefined when it has none. */
type SessionLookup = (key: string) => Promise<Session | undefined>;

interface Entry {
  session: Session;
  /** Turns admitted and not yet settled. */
  running: number;
  /** Spend reserved by those turns. */
  reservedUsd: number;
  /** The dearest settled turn of this session: the reservation for its next one. */
  dearestTurnUsd: number;
  /** Called when a running turn settles. */
  waiters: (() => void)[];
}

/** A 30-bit hash of a key (a small integer, cheap to keep in a Set). */
function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash & 0x3fffffff;
}

/**
 * Sessions by key, least recently used evicted beyond `capacity` (a Map keeps insertion order,
 * so re-inserting on use makes the first key the least recently used). A session with a running
 * turn is never evicted. With a lookup, an evicted session is looked up again when it returns.
 */
export class SessionStore implements Sessions {
  readonly capacity: number;
  #entries = new Map<string, Entry>();
  #lookup: SessionLookup | undefined;
  /** Hashes of evicted keys (only with a lookup): a miss on any other key is a new session. */
  #evicted = new Set<number>();
  #loading = new Map<string, Promise<void>>();
  /** The dearest settled turn of any session: the reservation for a session's first turn. */
  #dearestTurnUsd = 0;

  constructor(capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`session capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  /** From now on evicted sessions are found again through `lookup` (set before `restore`). */
  setLookup(lookup: SessionLookup): void {
    this.#lookup = lookup;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The session for a key (created empty when new), marked most recently used. */
  touch(key: string): Session {
    return this.#use(key).session;
  }

  /** Reads without creating or reordering. */
  peek(key: string): Readonly<Session> | undefined {
    return this.#entries.get(key)?.session;
  }

  /** Turns of the session admitted and not yet settled. */
  running(key: string): number {
    return this.#entries.get(key)?.running ?? 0;
  }

  /** Replaces a session's counters (e.g. rebuilt from a ledger at start-up). */
  restore(session: Session): void {
    const entry = this.#use(session.key);
    entry.session.turns = session.turns;
    entry.session.usd = session.usd;
  }

  /** All sessions, least recently used first (copies). */
  entries(): Session[] {
    return [...this.#entries.values()].map(({ session }) => ({ ...session }));
  }

  /**
   * Brings an evicted session back into memory through the lookup before `admit` (a session
   * never seen, or without a lookup, needs nothing). Rejects when the lookup fails.
   */
  load(key: string): Promise<void> {
    const lookup = this.#lookup;
    if (!lookup || this.#entries.has(key) || !this.#evicted.has(keyHash(key))) {
      return Promise.resolve();
    }
    let loading = this.#loading.get(key);
    if (!loading) {
      loading = lookup(key).then((found) => {
        if (found && !this.#entries.has(key)) this.restore({ ...found, key });
      }).finally(() => this.#loading.delete(key));
      this.#loading.set(key, loading);
    }
    return loading;
  }

  /**
   * Counts a turn and reserves its spend when the session's caps allow it, counting the spend
   * its running turns have reserved. The reservation is the session's dearest turn so far (any
   * session's for its first), or the whole remainder under the cap when no turn has settled yet.
   */
  admit(key: string, limits: SessionLimits): Admission {
    const entry = this.#use(key);
    const cap = sessionCap(entry.session, limits);
    if (cap) return { kind: "capped", cap };
    let reservedUsd = 0;
    if (limits.maxSessionUsd > 0) {
      const room = limits.maxSessionUsd - entry.session.usd - entry.reservedUsd;
      const estimate = entry.dearestTurnUsd || this.#dearestTurnUsd;
      // Only running turns can make room, so a session with none never waits.
      if (entry.running > 0 && (room <= USD_EPSILON || estimate === 0)) {
        const settled = new Promise<void>((resolve) => entry.waiters.push(resolve));
        return { kind: "wait", running: entry.running, settled };
      }
      reservedUsd = estimate || Math.max(room, 0);
    }
    entry.session.turns++;
    entry.running++;
    entry.reservedUsd += reservedUsd;
    return { kind: "run", ticket: { key, reservedUsd } };
  }

  /** Books an admitted turn's spend in place of its reservation; returns the session. */
  settle(ticket: Ticket, usd: number): Readonly<Session> {
    const entry = this.#release(ticket);
    entry.session.usd += usd;
    entry.dearestTurnUsd = Math.max(entry.dearestTurnUsd, usd);
    this.#dearestTurnUsd = Math.max(this.#dearestTurnUsd, usd);
    return entry.session;
  }

  /** An admitted turn did not run after all: it neither counts nor spends. */
  withdraw(ticket: Ticket): void {
    const entry = this.#release(ticket);
    entry.session.turns = Math.max(0, entry.session.turns - 1);
  }

  #release(ticket: Ticket): Entry {
    const entry = this.#use(ticket.key);
    entry.running = Math.max(0, entry.running - 1);
    entry.reservedUsd = entry.running === 0
      ? 0
      : Math.max(0, entry.reservedUsd - ticket.reservedUsd);
    const waiters = entry.waiters.splice(0);
    for (const wake of waiters) wake();
    return entry;
  }

  /** The entry for a key (created when new), marked most recently used. */
  #use(key: string): Entry {
    const entry = this.#entries.get(key) ??
      {
        session: { key, turns: 0, usd: 0 },
        running: 0,
        reservedUsd: 0,
        dearestTurnUsd: 0,
        waiters: [],
      };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    this.#evict(key);
    return entry;
  }

  /** Evicts least recently used sessions beyond capacity, except `kept` and running ones. */
  #evict(kept: string): void {
    if (this.#entries.size <= this.capacity) return;
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.capacity) break;
      if (entry.running > 0 || key === kept) continue;
      this.#entries.delete(key);
      if (this.#lookup) this.#evicted.add(keyHash(key));
    }
  }
}
