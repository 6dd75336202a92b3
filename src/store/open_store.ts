/**
 * Opening the store: checks the URL, connects, migrates the schema and hands out the row classes;
 * every way that can fail becomes a StoreError with one line that says what to fix.
 */
import postgres from "postgres";
import { HealthRows } from "./health_rows.ts";
import { KeyRows } from "./key_rows.ts";
import { LedgerRows } from "./ledger_rows.ts";
import { migrate, NewerSchemaError } from "./migrations.ts";
import { ReplicaRows } from "./replica_rows.ts";
import { SessionRows } from "./session_rows.ts";
import { displayUrl, urlProblem } from "./url.ts";

/** The store cannot be used; `message` is one line for the operator. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}

export interface Store {
  /** The URL without its password, for messages. */
  where: string;
  sql: postgres.Sql;
  replicas: ReplicaRows;
  sessions: SessionRows;
  ledger: LedgerRows;
  health: HealthRows;
  keys: KeyRows;
  close(): Promise<void>;
}

function reason(error: unknown): string {
  const err = error as { code?: string; message?: string };
  const text = (err.message ?? String(error)).split("\n")[0];
  return err.code && !text.includes(err.code) ? `${text} (${err.code})` : text;
}

export interface ConnectOptions {
  /** This replica's id (host:pid:random when not given). */
  replicaId?: string;
  /** Pool size. */
  max?: number;
  /** Seconds to wait for a connection. */
  connectTimeoutS?: number;
}

/** Connects and migrates; throws StoreError (one line) when the database cannot be used. */
export async function connectStore(url: string, options: ConnectOptions = {}): Promise<Store> {
  const problem = urlProblem(url);
  if (problem) throw new StoreError(problem);
  const where = displayUrl(url);
  const sql = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutS ?? 5,
    onnotice: () => {},
  });
  try {
    await migrate(sql);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    if (error instanceof NewerSchemaError) throw new StoreError(`${where}: ${error.message}`);
    throw new StoreError(`cannot use the database at ${where}: ${reason(error)}`);
  }
  const replicaId = options.replicaId ??
    `${Deno.hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  return {
    where,
    sql,
    replicas: new ReplicaRows(sql, replicaId),
    sessions: new SessionRows(sql, replicaId),
    ledger: new LedgerRows(sql, replicaId),
    health: new HealthRows(sql),
    keys: new KeyRows(sql),
    close: () => sql.end({ timeout: 2 }),
  };
}
