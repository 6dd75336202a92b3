/**
 * The configuration's public names: the schema and its types (config/schema.ts), loading
 * (config/load.ts), agent discovery on PATH (config/discover.ts) and error wording
 * (config/errors.ts).
 */
export * from "./config/schema.ts";
export * from "./config/errors.ts";
export * from "./config/load.ts";
export * from "./config/discover.ts";
