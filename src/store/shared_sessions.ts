/**
 * The council's session counters kept in the shared store: every admission is a reservation in
 * the database (so caps hold across replicas), every settle and withdrawal is queued and retried
 * until it lands; a local copy of each session's last known counters answers `peek`.
 */
import type { Clock } from "../base/clock.ts";
import type { Admission, Session, SessionLimits, Sessions, Ticket } from "../council/session.ts";
import type { Availability, RetryQueue } from "./availability.ts";
import type { Reservation, SessionRows } from "./session_rows.ts";

/** A ticket that holds a database reservation. */
interface SharedTicket extends Ticket {
  readonly reservation: Reservation;
}

/** Sessions remembered locally (for `peek`); the database has them all. */
const LOCAL_SESSIONS = 10_000;

export interface SharedSessionsOptions {
  rows: SessionRows;
  availability: Availability;
  writes: RetryQueue;
  clock: Clock;
  /** How often a turn waiting for room under the spend cap asks again. */
  pollMs: number;
}

export class SharedSessions implements Sessions {
  #options: SharedSessionsOptions;
  #local = new Map<string, Session>();
  #live = 0;
  /** The dearest turn this replica has settled: a session's first estimate. */
  #dearestUsd = 0;
  #settledWaiters: (() => void)[] = [];

  constructor(options: SharedSessionsOptions) {
    this.#options = options;
  }

  /** Turns admitted here and not yet settled. */
  get liveTurns(): number {
    return this.#live;
  }

  load(): Promise<void> {
    return Promise.resolve();
  }

  peek(key: string): Readonly<Session> | undefined {
    return this.#local.get(key);
  }

  /** Reserves in the database; throws when the database cannot be reached. */
  async admit(key: string, limits: SessionLimits): Promise<Admission> {
    const { rows, availability, writes } = this.#options;
    const id = crypto.randomUUID();
    let result;
    try {
      result = await availability.watch(() => rows.reserve(key, limits, this.#dearestUsd, id));
    } catch (error) {
      // The reservation may have been made with its answer lost: take it back once possible.
      writes.push(() => availability.watch(() => rows.withdraw({ id })));
      throw error;
    }
    if (result.kind === "run") {
      this.#live++;
      const ticket: SharedTicket = {
        key,
        reservedUsd: result.reservation.usd,
        reservation: result.reservation,
      };
      return { kind: "run", ticket };
    }
    if (result.kind === "capped") {
      return result.cap === "turns"
        ? { kind: "capped", cap: { kind: "turns", turns: result.turns, maxTurns: result.maxTurns } }
        : {
          kind: "capped",
          cap: { kind: "spend", usd: result.usd, maxSessionUsd: result.maxSessionUsd },
        };
    }
    return { kind: "wait", running: result.running, settled: this.#nextChance() };
  }

  /** Books the spend (queued until the database takes it); returns the counters as known here. */
  settle(ticket: Ticket, usd: number): Readonly<Session> {
    const { rows, writes, availability } = this.#options;
    const { reservation } = ticket as SharedTicket;
    this.#release();
    this.#dearestUsd = Math.max(this.#dearestUsd, usd);
    const known = this.#remember(ticket.key, { turns: 1, usd });
    writes.push(async () => {
      const settled = await availability.watch(() => rows.settle(reservation, usd));
      this.#local.set(settled.key, { ...settled });
    });
    return known;
  }

  withdraw(ticket: Ticket): void {
    const { rows, writes, availability } = this.#options;
    const { reservation } = ticket as SharedTicket;
    this.#release();
    writes.push(() => availability.watch(() => rows.withdraw(reservation)));
  }

  #release(): void {
    this.#live = Math.max(0, this.#live - 1);
    for (const wake of this.#settledWaiters.splice(0)) wake();
  }

  /** The local copy plus a turn just settled (the database's answer replaces it later). */
  #remember(key: string, add: { turns: number; usd: number }): Session {
    const before = this.#local.get(key) ?? { key, turns: 0, usd: 0 };
    const after = { key, turns: before.turns + add.turns, usd: before.usd + add.usd };
    this.#local.delete(key);
    this.#local.set(key, after);
    if (this.#local.size > LOCAL_SESSIONS) {
      this.#local.delete(this.#local.keys().next().value as string);
    }
    return after;
  }

  /** Resolves when a turn settles here, or after the poll interval (another replica's may). */
  #nextChance(): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#options.clock.setTimeout(() => resolve(), this.#options.pollMs);
      this.#settledWaiters.push(() => {
        this.#options.clock.clearTimeout(timer);
        resolve();
      });
    });
  }
}
