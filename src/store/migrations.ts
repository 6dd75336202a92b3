/**
 * The store's schema as numbered migrations, applied in order at start under an advisory lock so
 * replicas starting together apply each once; a database newer than this code is refused.
 */
import type postgres from "postgres";

/** Any constant shared by every replica: the key of the migration lock. */
const MIGRATION_LOCK = 0x436f756e; // "Coun"

/** Each entry moves the schema from version i to i + 1; never edit one that has shipped. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE replicas (
    id text PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    live_turns integer NOT NULL DEFAULT 0
  );
  CREATE TABLE sessions (
    key text PRIMARY KEY,
    turns integer NOT NULL DEFAULT 0,
    usd double precision NOT NULL DEFAULT 0,
    reserved_turns integer NOT NULL DEFAULT 0,
    reserved_usd double precision NOT NULL DEFAULT 0,
    dearest_usd double precision NOT NULL DEFAULT 0
  );
  CREATE TABLE reservations (
    id text PRIMARY KEY,
    session text NOT NULL REFERENCES sessions (key),
    replica text NOT NULL,
    turns integer NOT NULL,
    usd double precision NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Released by the reaper (no longer held against the caps) but not yet settled: a replica
    -- thought dead that settles after all still books its turn, once.
    released boolean NOT NULL DEFAULT false
  );
  CREATE INDEX reservations_replica ON reservations (replica);
  CREATE TABLE ledger_records (
    id bigserial PRIMARY KEY,
    replica text NOT NULL,
    kind text NOT NULL,
    turn text NOT NULL,
    session text NOT NULL,
    time timestamptz NOT NULL,
    agent text,
    record jsonb NOT NULL
  );
  CREATE INDEX ledger_records_time ON ledger_records (time);
  CREATE INDEX ledger_records_session ON ledger_records (session);
  CREATE INDEX ledger_records_turn ON ledger_records (turn);
  CREATE TABLE health (
    agent text PRIMARY KEY,
    record jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE api_keys (
    id text PRIMARY KEY,
    name text NOT NULL,
    key_hash text NOT NULL UNIQUE,
    max_usd double precision NOT NULL,
    period text NOT NULL CHECK (period IN ('day', 'week', 'month', 'none')),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  );
  CREATE TABLE key_spend (
    key_id text NOT NULL REFERENCES api_keys (id),
    period_start timestamptz NOT NULL,
    usd double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, period_start)
  );
  `,
];

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The database's schema is newer than this code: an older replica must not write to it. */
export class NewerSchemaError extends Error {
  constructor(found: number) {
    super(
      `the database's schema is version ${found}, newer than this gateway knows ` +
        `(${SCHEMA_VERSION}): upgrade the gateway`,
    );
    this.name = "NewerSchemaError";
  }
}

/**
 * Brings the schema up to SCHEMA_VERSION in one transaction (all of it or none); the advisory lock
 * makes a replica that starts meanwhile wait, then find nothing to do. Returns the version found.
 */
export async function migrate(sql: postgres.Sql): Promise<number> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_version (
      version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const [row] = await tx`SELECT coalesce(max(version), 0)::int AS version FROM schema_version`;
    const current = row.version as number;
    if (current > SCHEMA_VERSION) throw new NewerSchemaError(current);
    for (let version = current; version < SCHEMA_VERSION; version++) {
      await tx.unsafe(MIGRATIONS[version]);
      await tx`INSERT INTO schema_version (version) VALUES (${version + 1})`;
    }
    return current;
  });
}
