/**
 * Session counters shared by replicas: a turn is admitted by one atomic statement that reserves
 * its turn and spend only while the caps leave room, and settled by one that books the actual
 * spend in place of the reservation; settling and withdrawing remove the reservation's row, so a
 * retry finds nothing and books nothing twice.
 */
import type postgres from "postgres";

/** Sums of float dollars drift: a millionth of a cent short of the cap is at the cap. */
const USD_EPSILON = 1e-8;

export interface SessionCounters {
  key: string;
  turns: number;
  usd: number;
}

export interface SessionCaps {
  maxTurns: number;
  /** 0 = no spend cap. */
  maxSessionUsd: number;
}

/** A running turn's claim, held in the database until it settles or its replica is reaped. */
export interface Reservation {
  id: string;
  key: string;
  usd: number;
}

export type ReserveResult =
  | { kind: "run"; reservation: Reservation }
  | { kind: "capped"; cap: "turns"; turns: number; maxTurns: number }
  | { kind: "capped"; cap: "spend"; usd: number; maxSessionUsd: number }
  /** Running turns (on any replica) hold the room under the spend cap: ask again later. */
  | { kind: "wait"; running: number };

interface SessionRow {
  turns: number;
  usd: number;
  reserved_turns: number;
}

/** Why a reservation was refused, from the session's row as it is now; null = try again. */
export function refusal(row: SessionRow, caps: SessionCaps): ReserveResult | null {
  const turns = row.turns + row.reserved_turns;
  if (turns >= caps.maxTurns) {
    return { kind: "capped", cap: "turns", turns, maxTurns: caps.maxTurns };
  }
  if (caps.maxSessionUsd > 0 && row.usd >= caps.maxSessionUsd - USD_EPSILON) {
    return { kind: "capped", cap: "spend", usd: row.usd, maxSessionUsd: caps.maxSessionUsd };
  }
  return row.reserved_turns > 0 ? { kind: "wait", running: row.reserved_turns } : null;
}

/** Attempts before a reservation that keeps losing races reports the session as busy. */
const RESERVE_ATTEMPTS = 5;

export class SessionRows {
  #sql: postgres.Sql;
  #replica: string;

  constructor(sql: postgres.Sql, replica: string) {
    this.#sql = sql;
    this.#replica = replica;
  }

  /**
   * Reserves one turn and its spend estimate: the session's dearest settled turn, else
   * `fallbackUsd` (the dearest turn this replica knows), else the whole room under the cap. The
   * UPDATE's WHERE is re-checked on the row's newest version after any lock wait, so concurrent
   * reserves on every replica see each other: with running turns the estimate must fit under the
   * cap; a session with none always gets its turn (only running turns can make room).
   */
  async reserve(
    key: string,
    caps: SessionCaps,
    fallbackUsd: number,
    id: string = crypto.randomUUID(),
  ): Promise<ReserveResult> {
    const sql = this.#sql;
    const cap = caps.maxSessionUsd;
    await sql`INSERT INTO sessions (key) VALUES (${key}) ON CONFLICT (key) DO NOTHING`;
    for (let attempt = 0; attempt < RESERVE_ATTEMPTS; attempt++) {
      const rows = await sql`
        WITH estimate AS (
          SELECT key, CASE
            WHEN ${cap}::float8 <= 0 THEN 0
            WHEN dearest_usd > 0 THEN dearest_usd
            WHEN ${fallbackUsd}::float8 > 0 THEN ${fallbackUsd}::float8
            ELSE greatest(${cap}::float8 - usd - reserved_usd, 0)
          END AS usd
          FROM sessions WHERE key = ${key}
        ), reserved AS (
          UPDATE sessions s SET reserved_turns = s.reserved_turns + 1,
            reserved_usd = s.reserved_usd + e.usd
          FROM estimate e
          WHERE s.key = e.key
            AND s.turns + s.reserved_turns < ${caps.maxTurns}
            AND (${cap}::float8 <= 0 OR (
              s.usd < ${cap}::float8 - ${USD_EPSILON}
              AND (s.reserved_turns = 0 OR (e.usd > 0 AND
                s.usd + s.reserved_usd + e.usd <= ${cap}::float8 + ${USD_EPSILON}))))
          RETURNING s.key, e.usd
        )
        INSERT INTO reservations (id, session, replica, turns, usd)
        SELECT ${id}, key, ${this.#replica}, 1, usd FROM reserved
        RETURNING id, usd`;
      if (rows.length === 1) {
        return { kind: "run", reservation: { id: rows[0].id, key, usd: rows[0].usd } };
      }
      const [row] = await sql<SessionRow[]>`
        SELECT turns, usd, reserved_turns FROM sessions WHERE key = ${key}`;
      const refused = refusal(row, caps);
      if (refused) return refused;
    }
    return { kind: "wait", running: 0 };
  }

  /**
   * Books a turn's actual spend in place of its reservation, in one statement. Settling twice (a
   * retry) finds no reservation and books nothing; one the reaper released still books its turn.
   */
  async settle(reservation: Reservation, usd: number): Promise<SessionCounters> {
    const sql = this.#sql;
    const rows = await sql<SessionCounters[]>`
      WITH gone AS (
        DELETE FROM reservations WHERE id = ${reservation.id}
        RETURNING session, turns, CASE WHEN released THEN 0 ELSE turns END AS held_turns,
          CASE WHEN released THEN 0 ELSE usd END AS held_usd
      )
      UPDATE sessions s SET turns = s.turns + r.turns, usd = s.usd + ${usd}::float8,
        reserved_turns = greatest(s.reserved_turns - r.held_turns, 0),
        reserved_usd = greatest(s.reserved_usd - r.held_usd, 0),
        dearest_usd = greatest(s.dearest_usd, ${usd}::float8)
      FROM gone r WHERE s.key = r.session
      RETURNING s.key, s.turns, s.usd`;
    return rows[0] ?? await this.get(reservation.key) ?? { key: reservation.key, turns: 0, usd: 0 };
  }

  /**
   * An admitted turn did not run after all (or its reserve's answer was lost): its reservation
   * goes, nothing is counted. Withdrawing one that does not exist does nothing.
   */
  async withdraw(reservation: Pick<Reservation, "id">): Promise<void> {
    await this.#sql`
      WITH gone AS (
        DELETE FROM reservations WHERE id = ${reservation.id} AND NOT released
        RETURNING session, turns, usd
      ), dropped AS (
        DELETE FROM reservations WHERE id = ${reservation.id} AND released
      )
      UPDATE sessions s SET reserved_turns = greatest(s.reserved_turns - r.turns, 0),
        reserved_usd = greatest(s.reserved_usd - r.usd, 0)
      FROM gone r WHERE s.key = r.session`;
  }

  /** A session's settled counters, or undefined when it never ran. */
  async get(key: string): Promise<SessionCounters | undefined> {
    const [row] = await this.#sql<SessionCounters[]>`
      SELECT key, turns, usd FROM sessions WHERE key = ${key}`;
    return row;
  }

  /** Turns reserved and not yet settled, per session (every replica's). */
  async running(key: string): Promise<number> {
    const [row] = await this.#sql`SELECT reserved_turns FROM sessions WHERE key = ${key}`;
    return row?.reserved_turns ?? 0;
  }

  /** The dearest settled turn of any session: a first turn's estimate. */
  async dearestTurnUsd(): Promise<number> {
    const [row] = await this.#sql`SELECT coalesce(max(dearest_usd), 0) AS usd FROM sessions`;
    return row.usd;
  }
}
