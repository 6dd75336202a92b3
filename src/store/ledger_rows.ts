/**
 * The ledger's records as rows: one row per record with the indexed columns every reader filters
 * on and the whole record as jsonb (unknown and future keys kept as they are).
 */
import type postgres from "postgres";
import { type LedgerLine, parseLine } from "../ledger/lines.ts";

/** What every ledger record has (start, call, turn entry, outcome, …). */
export interface LedgerRecordLike {
  kind?: string;
  turn: string;
  session: string;
  time: string;
  [key: string]: unknown;
}

/** The agent a record is about, when it is about one (a call line's call). */
function agentOf(record: LedgerRecordLike): string | null {
  const call = record.call as { agent?: unknown } | undefined;
  if (typeof call?.agent === "string") return call.agent;
  return typeof record.agent === "string" ? record.agent : null;
}

export class LedgerRows {
  #sql: postgres.Sql;
  #replica: string;

  constructor(sql: postgres.Sql, replica: string) {
    this.#sql = sql;
    this.#replica = replica;
  }

  /** Appends one record (a turn entry has no `kind`: it is stored as kind `turn`). */
  async append(record: LedgerRecordLike): Promise<void> {
    await this.#sql`
      INSERT INTO ledger_records (replica, kind, turn, session, time, agent, record)
      VALUES (${this.#replica}, ${record.kind ?? "turn"}, ${record.turn}, ${record.session},
        ${record.time}, ${agentOf(record)}, ${this.#sql.json(record as postgres.JSONValue)})`;
  }

  /**
   * The turn entries (ended at or after `since`, ISO time) and every outcome record, parsed as
   * the JSONL ledger's lines are: the input of the folds over records (usage, seats).
   */
  async turnsAndOutcomes(since = "1970-01-01T00:00:00Z"): Promise<LedgerLine[]> {
    const rows = await this.#sql`
      SELECT record FROM ledger_records
      WHERE (kind = 'turn' AND time >= ${since}) OR kind = 'outcome' ORDER BY id`;
    return rows.map((row) => parseLine(JSON.stringify(row.record)))
      .filter((line) => line.kind === "turn" || line.kind === "outcome");
  }
}
