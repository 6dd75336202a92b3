/**
 * Per-person API keys: only each key's SHA-256 is stored; a key's spend is kept per budget period
 * (UTC day, ISO week from Monday, calendar month, or none), so a new period starts at zero.
 */
import type postgres from "postgres";

export const PERIODS = ["day", "week", "month", "none"] as const;
export type Period = typeof PERIODS[number];

export interface ApiKeyRow {
  id: string;
  name: string;
  maxUsd: number;
  period: Period;
  createdAt: string;
  revokedAt: string | null;
  /** Spend in the current period. */
  spentUsd: number;
}

const DAY_MS = 86_400_000;

/** When the period holding `now` began (epoch ms, UTC); `none` is one period since the epoch. */
export function periodStart(period: Period, now: number): number {
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (period === "day") return midnight;
  if (period === "week") return midnight - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  if (period === "month") return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  return 0;
}

/** When the period holding `now` ends and spend starts again from zero; null for `none`. */
export function periodEnd(period: Period, now: number): number | null {
  const start = periodStart(period, now);
  if (period === "day") return start + DAY_MS;
  if (period === "week") return start + 7 * DAY_MS;
  if (period === "month") {
    const date = new Date(start);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
  return null;
}

/** The stored form of a key: its SHA-256, hex. */
export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function randomText(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** Keys start with this, so a leaked one is recognisable (and a scanner can find it). */
export const KEY_PREFIX = "cgk_";

export class KeyRows {
  #sql: postgres.Sql;

  constructor(sql: postgres.Sql) {
    this.#sql = sql;
  }

  /** Makes a key; the returned `key` is the only time its text exists outside the holder. */
  async create(
    input: { name: string; maxUsd: number; period: Period },
  ): Promise<{ id: string; key: string }> {
    const key = `${KEY_PREFIX}${randomText(32)}`;
    const id = `key_${randomText(6)}`;
    await this.#sql`
      INSERT INTO api_keys (id, name, key_hash, max_usd, period)
      VALUES (${id}, ${input.name}, ${await hashKey(key)}, ${input.maxUsd}, ${input.period})`;
    return { id, key };
  }

  /** Every key with its spend in its current period, oldest first. */
  async list(now: number): Promise<ApiKeyRow[]> {
    const rows = await this.#sql`
      SELECT k.id, k.name, k.max_usd, k.period, k.created_at, k.revoked_at,
        (SELECT coalesce(sum(s.usd), 0) FROM key_spend s WHERE s.key_id = k.id
          AND s.period_start = CASE k.period
            WHEN 'day' THEN ${new Date(periodStart("day", now))}::timestamptz
            WHEN 'week' THEN ${new Date(periodStart("week", now))}::timestamptz
            WHEN 'month' THEN ${new Date(periodStart("month", now))}::timestamptz
            ELSE ${new Date(0)}::timestamptz END) AS spent
      FROM api_keys k ORDER BY k.created_at, k.id`;
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      maxUsd: row.max_usd,
      period: row.period,
      createdAt: new Date(row.created_at).toISOString(),
      revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
      spentUsd: row.spent,
    }));
  }

  /** Revokes the key with this id or name; returns how many keys it revoked. */
  async revoke(idOrName: string): Promise<number> {
    const rows = await this.#sql`
      UPDATE api_keys SET revoked_at = now()
      WHERE (id = ${idOrName} OR name = ${idOrName}) AND revoked_at IS NULL RETURNING id`;
    return rows.length;
  }

  /** The live key whose text this is, with its current spend; undefined for unknown or revoked. */
  async find(presented: string, now: number): Promise<ApiKeyRow | undefined> {
    if (!presented.startsWith(KEY_PREFIX)) return undefined;
    const hash = await hashKey(presented);
    const [row] = await this.#sql`
      SELECT id FROM api_keys WHERE key_hash = ${hash} AND revoked_at IS NULL`;
    if (!row) return undefined;
    return (await this.list(now)).find((key) => key.id === row.id);
  }

  /** Adds a turn's spend to the key's current period. */
  async charge(key: Pick<ApiKeyRow, "id" | "period">, usd: number, now: number): Promise<void> {
    const start = new Date(periodStart(key.period, now));
    await this.#sql`
      INSERT INTO key_spend (key_id, period_start, usd) VALUES (${key.id}, ${start}, ${usd})
      ON CONFLICT (key_id, period_start) DO UPDATE SET usd = key_spend.usd + EXCLUDED.usd`;
  }
}
