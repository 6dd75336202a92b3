/**
 * Replica liveness: each replica's row with its heartbeat (database time, so hosts' clocks do not
 * matter) and live turns, and the reaper that releases the reservations of replicas that stopped
 * beating.
 */
import type postgres from "postgres";

export interface ReplicaRow {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
  liveTurns: number;
}

export class ReplicaRows {
  #sql: postgres.Sql;
  readonly id: string;

  constructor(sql: postgres.Sql, id: string) {
    this.#sql = sql;
    this.id = id;
  }

  /** Writes this replica's heartbeat (re-creating its row if a reaper removed it). */
  async beat(liveTurns: number, host = Deno.hostname(), pid = Deno.pid): Promise<void> {
    await this.#sql`
      INSERT INTO replicas (id, host, pid, live_turns) VALUES (${this.id}, ${host}, ${pid},
        ${liveTurns})
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), live_turns = EXCLUDED.live_turns`;
  }

  /**
   * Releases every reservation held by a replica whose heartbeat is older than `staleMs` (or
   * that has no row): it no longer counts against the caps, and its row stays (marked) so that a
   * replica that was only cut off still books its turn when it settles. Forgets those replicas
   * and drops released rows a day old. One statement; returns the count released now.
   */
  async reap(staleMs: number): Promise<number> {
    const sql = this.#sql;
    const stale = `${Math.max(1, Math.round(staleMs))} milliseconds`;
    const rows = await sql`
      WITH live AS (
        SELECT id FROM replicas WHERE heartbeat_at >= now() - ${stale}::interval
      ), released AS (
        UPDATE reservations SET released = true
        WHERE NOT released AND replica NOT IN (SELECT id FROM live)
        RETURNING session, turns, usd
      ), expired AS (
        DELETE FROM reservations WHERE released AND created_at < now() - interval '1 day'
      ), sums AS (
        SELECT session, sum(turns)::int AS turns, sum(usd) AS usd, count(*)::int AS n
        FROM released GROUP BY session
      ), updated AS (
        UPDATE sessions s SET reserved_turns = greatest(s.reserved_turns - sums.turns, 0),
          reserved_usd = greatest(s.reserved_usd - sums.usd, 0)
        FROM sums WHERE s.key = sums.session
        RETURNING sums.n
      ), forgotten AS (
        DELETE FROM replicas WHERE id NOT IN (SELECT id FROM live) RETURNING id
      )
      SELECT (SELECT coalesce(sum(n), 0) FROM updated)::int AS released,
        (SELECT count(*) FROM forgotten)::int AS gone`;
    return rows[0].released;
  }

  /** Every replica with a row, oldest first. */
  async list(): Promise<ReplicaRow[]> {
    const rows = await this.#sql`
      SELECT id, host, pid, started_at, heartbeat_at, live_turns FROM replicas
      ORDER BY started_at, id`;
    return rows.map((row) => ({
      id: row.id,
      host: row.host,
      pid: row.pid,
      startedAt: new Date(row.started_at).toISOString(),
      heartbeatAt: new Date(row.heartbeat_at).toISOString(),
      liveTurns: row.live_turns,
    }));
  }

  /** Removes this replica's row and withdraws its reservations (a clean shutdown). */
  async leave(): Promise<void> {
    await this.#sql`DELETE FROM replicas WHERE id = ${this.id}`;
    await this.#sql`
      WITH released AS (
        DELETE FROM reservations WHERE replica = ${this.id} AND NOT released
        RETURNING session, turns, usd
      ), sums AS (
        SELECT session, sum(turns)::int AS turns, sum(usd) AS usd FROM released GROUP BY session
      )
      UPDATE sessions s SET reserved_turns = greatest(s.reserved_turns - sums.turns, 0),
        reserved_usd = greatest(s.reserved_usd - sums.usd, 0)
      FROM sums WHERE s.key = sums.session`;
  }
}
