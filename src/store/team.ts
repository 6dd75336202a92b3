/**
 * A replica's membership of a team: the store opened and migrated, its heartbeat and the reaper
 * on one timer, the council's sessions and journal on the database, per-person keys checked and
 * charged, and the team's status (replicas, totals, spend per key).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "@logtape/logtape";
import { type Clock, systemClock } from "../base/clock.ts";
import type { TurnRecord } from "../council/records.ts";
import type { AgentHealthStatus } from "../council/calls/health.ts";
import { redact } from "../base/redact.ts";
import { Availability, RetryQueue } from "./availability.ts";
import { connectStore, type Store } from "./open_store.ts";
import { StoreJournal } from "./store_journal.ts";
import { type ApiKeyRow, KEY_PREFIX, periodEnd } from "./key_rows.ts";
import type { ReplicaRow } from "./replica_rows.ts";
import { SharedSessions } from "./shared_sessions.ts";

export interface TeamOptions {
  url: string;
  log: Logger;
  clock?: Clock;
  /** How often this replica beats (and reaps); a replica silent for 3 beats is reaped. */
  heartbeatMs?: number;
}

/** Why a turn may not start now, in the words of its protocol's error envelope. */
export interface GateRefusal {
  status: 401 | 429 | 503;
  type: string;
  message: string;
  code: string;
  retryAfterS?: number;
}

export interface TeamStatus {
  replicas: ReplicaRow[];
  totals: { replicas: number; liveTurns: number };
  keys: ApiKeyRow[];
  /** Each agent's health as the replica that last saw it change wrote it. */
  health: Record<string, unknown>[];
}

/** A council's agent health, read and taken over (see `Team.shareHealth`). */
interface HealthLink {
  read: () => readonly AgentHealthStatus[];
  adopt: (status: AgentHealthStatus) => void;
}

export const DEFAULT_HEARTBEAT_MS = 5_000;
const KEY_CACHE_MS = 1_000;

const unavailable = (): GateRefusal => ({
  status: 503,
  type: "api_error",
  message: "the gateway's database is unreachable; retry shortly",
  code: "database_unavailable",
  retryAfterS: 2,
});

export class Team {
  readonly store: Store;
  readonly availability: Availability;
  readonly writes: RetryQueue;
  readonly sessions: SharedSessions;
  readonly journal: StoreJournal;
  #clock: Clock;
  #log: Logger;
  #timer: ReturnType<Clock["setInterval"]>;
  #heartbeatMs: number;
  #keyOfTurn = new AsyncLocalStorage<ApiKeyRow>();
  #keyCache = new Map<string, { at: number; key: ApiKeyRow | undefined }>();
  #health: HealthLink | undefined;
  /** Each agent's health as this replica last wrote it. */
  #healthWritten = new Map<string, string>();

  constructor(store: Store, options: TeamOptions) {
    const clock = options.clock ?? systemClock;
    this.store = store;
    this.#clock = clock;
    this.#log = options.log;
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.availability = new Availability(clock, (up, error) => {
      if (up) this.#log.info("database {where} is back", { where: store.where });
      else {
        this.#log.error(
          "database {where} is unreachable: {error}; turns get 503 until it returns",
          {
            where: store.where,
            error: (error as Error)?.message ?? String(error),
          },
        );
      }
    });
    const retryMs = Math.min(this.#heartbeatMs, 1_000);
    this.writes = new RetryQueue(clock, retryMs, (error, dropped) => {
      const message = redact((error as Error)?.message ?? String(error));
      if (dropped) {
        this.#log.error("a database write failed and is dropped: {message}", { message });
      } else this.#log.warn("a database write is retried: {message}", { message });
    });
    this.sessions = new SharedSessions({
      rows: store.sessions,
      availability: this.availability,
      writes: this.writes,
      clock,
      pollMs: 100,
    });
    this.journal = new StoreJournal(store.ledger, this.writes, this.availability);
    this.#timer = clock.setInterval(() => void this.beat(), this.#heartbeatMs);
  }

  /**
   * Writes the heartbeat and releases the reservations of replicas silent for 3 beats. Not
   * while the database has only just come back: every replica was silent then, through no fault
   * of its own, and must get the time to beat again first.
   */
  async beat(): Promise<void> {
    const staleMs = 3 * this.#heartbeatMs;
    const settled = this.availability.upForMs() >= staleMs;
    try {
      await this.availability.watch(async () => {
        await this.store.replicas.beat(this.sessions.liveTurns);
        await this.#syncHealth();
        if (!settled) return;
        const released = await this.store.replicas.reap(staleMs);
        if (released > 0) {
          this.#log.warn("released {count} reservation(s) of replicas that stopped beating", {
            count: released,
          });
        }
      });
    } catch {
      // Availability has logged it; the next beat tries again.
    }
  }

  /**
   * From now on each beat writes the council's agent health where it changed and takes over the
   * cool-downs other replicas started, so a failing upstream is skipped by every replica.
   */
  shareHealth(
    read: () => readonly AgentHealthStatus[],
    adopt: (status: AgentHealthStatus) => void,
  ): void {
    this.#health = { read, adopt };
  }

  async #syncHealth(): Promise<void> {
    const link = this.#health;
    if (!link) return;
    for (const status of link.read()) {
      const record = JSON.parse(redact(JSON.stringify(status)));
      const text = JSON.stringify(record);
      if (this.#healthWritten.get(status.agent) === text) continue;
      await this.store.health.put(status.agent, { ...record, replica: this.store.replicas.id });
      this.#healthWritten.set(status.agent, text);
    }
    for (const record of (await this.store.health.all()).values()) {
      link.adopt(record as unknown as AgentHealthStatus);
    }
  }

  /**
   * The live person key among the presented tokens; undefined when none. Authentication may take
   * it from a brief cache; a turn's gate (`fresh`) reads its spend as it is now.
   */
  async personKey(presented: string[], fresh = false): Promise<ApiKeyRow | undefined> {
    const text = presented.find((token) => token.startsWith(KEY_PREFIX));
    if (text === undefined) return undefined;
    const now = this.#clock.now();
    const cached = this.#keyCache.get(text);
    if (!fresh && cached && now - cached.at < KEY_CACHE_MS) return cached.key;
    const key = await this.availability.watch(() => this.store.keys.find(text, now));
    this.#keyCache.set(text, { at: now, key });
    return key;
  }

  /**
   * Decides whether a turn may start and runs it (`next`) with its person key attached for
   * `onTurnEnd`: 503 while the database is down, 401 for an unknown or revoked person key, 429
   * with `retry-after` until the period resets for a key over its budget.
   */
  async gate(presented: string[], next: () => Promise<void>): Promise<GateRefusal | undefined> {
    if (!this.availability.up) return unavailable();
    let key: ApiKeyRow | undefined;
    try {
      key = await this.personKey(presented, true);
    } catch {
      return unavailable();
    }
    const offered = presented.some((token) => token.startsWith(KEY_PREFIX));
    if (offered && !key) {
      return {
        status: 401,
        type: "authentication_error",
        message: "unauthorized: unknown or revoked key",
        code: "invalid_api_key",
      };
    }
    if (key && key.spentUsd >= key.maxUsd) return this.#overBudget(key);
    if (key) await this.#keyOfTurn.run(key, next);
    else await next();
    return undefined;
  }

  #overBudget(key: ApiKeyRow): GateRefusal {
    const end = periodEnd(key.period, this.#clock.now());
    const refusal: GateRefusal = {
      status: 429,
      type: "rate_limit_error",
      message: `key ${key.name} has spent $${key.spentUsd.toFixed(2)} of its $${key.maxUsd} ` +
        (end === null
          ? "budget"
          : `${key.period}ly budget; it resets ${new Date(end).toISOString()}`),
      code: "budget_exceeded",
    };
    if (end !== null) {
      refusal.retryAfterS = Math.max(1, Math.ceil((end - this.#clock.now()) / 1000));
    }
    return refusal;
  }

  /** Charges a finished turn's spend to the person key it ran under. */
  onTurnEnd = (record: TurnRecord): void => {
    const key = this.#keyOfTurn.getStore();
    if (!key || record.usage.usd <= 0) return;
    const at = this.#clock.now();
    this.writes.push(() =>
      this.availability.watch(() => this.store.keys.charge(key, record.usage.usd, at))
    );
  };

  async status(): Promise<TeamStatus> {
    const [replicas, keys, health] = await this.availability.watch(() =>
      Promise.all([
        this.store.replicas.list(),
        this.store.keys.list(this.#clock.now()),
        this.store.health.all(),
      ])
    );
    return {
      replicas,
      totals: {
        replicas: replicas.length,
        liveTurns: replicas.reduce((total, replica) => total + replica.liveTurns, 0),
      },
      keys,
      health: [...health.values()],
    };
  }

  #closed: Promise<void> | undefined;

  /** Stops beating, lets queued writes land (bounded), leaves the team and closes the pool. */
  close(waitMs = 5_000): Promise<void> {
    this.#closed ??= this.#close(waitMs);
    return this.#closed;
  }

  async #close(waitMs: number): Promise<void> {
    this.#clock.clearInterval(this.#timer);
    let timer: ReturnType<Clock["setTimeout"]> | undefined;
    await Promise.race([
      this.writes.drain(),
      new Promise((resolve) => timer = this.#clock.setTimeout(() => resolve(null), waitMs)),
    ]);
    if (timer !== undefined) this.#clock.clearTimeout(timer);
    this.writes.close();
    await this.store.replicas.leave().catch(() => {});
    await this.store.close();
  }
}

/** Connects (throwing StoreError with one line when it cannot), beats once, and starts the timer. */
export async function startTeam(options: TeamOptions): Promise<Team> {
  const store = await connectStore(options.url);
  const team = new Team(store, options);
  await team.beat();
  return team;
}
