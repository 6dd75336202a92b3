/**
 * The shared PostgreSQL store that lets several gateway replicas act as one: schema migrations,
 * session counters with atomic reservations, the ledger's records, agent health, per-person keys
 * and replica heartbeats.
 */
export { connectStore, type Store, StoreError } from "./connect.ts";
export { migrate, SCHEMA_VERSION } from "./migrations.ts";
export { type Reservation, type ReserveResult, SessionRows } from "./sessions.ts";
export { type ReplicaRow, ReplicaRows } from "./replicas.ts";
export { LedgerRows } from "./ledger.ts";
export { HealthRows } from "./health.ts";
export { type ApiKeyRow, KeyRows, type Period } from "./keys.ts";
