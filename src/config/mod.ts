/**
 * The configuration and its public names: the schema and its types, loading and error wording
 * (reload, differences and the bind policy are imported directly).
 */
export * from "./schema.ts";
export * from "./errors.ts";
export * from "./load.ts";
