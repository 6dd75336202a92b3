/**
 * What differs between two configurations, worded for a log line: values of plain settings,
 * agents by name and model, and no secret (a token or an agent's env is only said to differ).
 */
import type { AgentConfig, Config } from "./schema.ts";

/** Keys a running gateway cannot take over: they apply at the next start. */
export const RESTART_KEYS: ReadonlySet<string> = new Set([
  "host",
  "port",
  "ledger",
  "database",
  "databaseHeartbeatMs",
  "sessionCapacity",
  "logJson",
]);

/** Keys whose values are never shown. */
const SECRET_KEYS: ReadonlySet<string> = new Set(["token", "database"]);

export interface ConfigChange {
  key: string;
  /** `auto → always`, or `changed` when the values are not shown. */
  text: string;
  restart: boolean;
}

/** JSON with object keys sorted, so equal settings compare equal whatever their order. */
function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
        : v,
  ) ?? "undefined";
}

function agentsText(agents: readonly AgentConfig[]): string {
  return agents.map((a) => `${a.name}:${a.model}`).join(",") || "none";
}

function shown(value: unknown): string {
  if (value === undefined) return "unset";
  if (typeof value === "string") return value === "" ? '""' : value;
  if (Array.isArray(value) && value.every((v) => typeof v !== "object")) {
    return `[${value.join(", ")}]`;
  }
  return typeof value === "object" && value !== null ? "" : String(value);
}

function describe(key: string, before: unknown, after: unknown): string {
  if (SECRET_KEYS.has(key)) {
    return before === undefined ? "set" : after === undefined ? "unset" : "changed";
  }
  if (key === "defaultAgents") {
    const [a, b] = [agentsText(before as AgentConfig[]), agentsText(after as AgentConfig[])];
    return a === b ? `${a} (settings of an agent changed)` : `${a} → ${b}`;
  }
  const [a, b] = [shown(before), shown(after)];
  return a && b ? `${a} → ${b}` : "changed";
}

/** The keys whose effective values differ, in the schema's order. */
export function configChanges(before: Readonly<Config>, after: Readonly<Config>): ConfigChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((key) => key !== "configPath" && key !== "agentsSource");
  const changes: ConfigChange[] = [];
  for (const key of keys) {
    const a = (before as unknown as Record<string, unknown>)[key];
    const b = (after as unknown as Record<string, unknown>)[key];
    if (canonical(a) === canonical(b)) continue;
    changes.push({ key, text: describe(key, a, b), restart: RESTART_KEYS.has(key) });
  }
  return changes;
}
