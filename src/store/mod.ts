/**
 * The shared PostgreSQL store that lets several gateway replicas act as one: schema migrations,
 * session counters with atomic reservations, the ledger's records, agent health, per-person keys
 * and replica heartbeats.
 */
export { connectStore, type Store, StoreError } from "./open_store.ts";
export { migrate, SCHEMA_VERSION } from "./migrations.ts";
export { type Reservation, type ReserveResult, SessionRows } from "./session_rows.ts";
export { type ReplicaRow, ReplicaRows } from "./replica_rows.ts";
export { LedgerRows } from "./ledger_rows.ts";
export { HealthRows } from "./health_rows.ts";
export { type ApiKeyRow, KeyRows, type Period } from "./key_rows.ts";
