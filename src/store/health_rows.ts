/** Agent health shared by replicas: one row per agent holding its health record as jsonb. */
import type postgres from "postgres";

export class HealthRows {
  #sql: postgres.Sql;

  constructor(sql: postgres.Sql) {
    this.#sql = sql;
  }

  /** Replaces an agent's record. */
  async put(agent: string, record: Record<string, unknown>): Promise<void> {
    await this.#sql`
      INSERT INTO health (agent, record) VALUES (${agent}, ${
      this.#sql.json(
        record as postgres.JSONValue,
      )
    })
      ON CONFLICT (agent) DO UPDATE SET record = EXCLUDED.record, updated_at = now()`;
  }

  /** Every agent's record, by agent name. */
  async all(): Promise<Map<string, Record<string, unknown>>> {
    const rows = await this.#sql`SELECT agent, record FROM health ORDER BY agent`;
    return new Map(rows.map((row) => [row.agent, row.record]));
  }
}
