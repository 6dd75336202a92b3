/**
 * The configuration's public names: the schema and its types (config/schema.ts), loading
 * (config/load.ts), agent discovery on PATH (config/discover.ts) and error wording
 * (config/errors.ts).
 */
export * from "./schema.ts";
export * from "./errors.ts";
export * from "./load.ts";
export * from "./discover.ts";
