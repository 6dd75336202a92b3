/**
 * Configuration: the zod schema, its defaults, and loading from a YAML file plus `SVC_*` env.
 *
 * Precedence is env > file > defaults. The result is parsed once and frozen.
 */
import { z } from "zod";
import YAML from "yaml";

export const RUNNERS = ["claude", "codex", "gemini", "command"] as const;
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export const FAN_OUT_POLICIES = ["always", "auto", "necessary", "never"] as const;
export const FAN_OUT_SCOPES = ["first-turn", "every-turn"] as const;
export const PROGRESS_DETAILS = ["telemetry", "interleaved"] as const;

export const DEFAULT_TIMEOUT_MS = 600_000;

export const AgentSchema = z.strictObject({
  name: z.string().min(1).optional(),
  runner: z.enum(RUNNERS),
  model: z.string().min(1),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().default(DEFAULT_TIMEOUT_MS),
});
/** An agent entry as configured (name may be absent). */
export type AgentEntry = z.infer<typeof AgentSchema>;
/** An agent entry after defaults: the display name is always set. */
export type AgentConfig = AgentEntry & { name: string };

export const PriceSchema = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
});
export type Price = z.infer<typeof PriceSchema>;

const port = z.number().int().min(0).max(65535);

export const ConfigSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: port.default(6767),
  token: z.string().optional(),
  logLevel: z.enum(LOG_LEVELS).default("info"),
  logJson: z.boolean().default(false),
  streamProgress: z.boolean().default(true),
  progressDetail: z.enum(PROGRESS_DETAILS).default("telemetry"),
  fanOutPolicy: z.enum(FAN_OUT_POLICIES).default("auto"),
  fanOutScope: z.enum(FAN_OUT_SCOPES).default("first-turn"),
  maxTurns: z.number().int().positive().default(100),
  maxSessionUsd: z.number().nonnegative().default(0),
  sessionCapacity: z.number().int().positive().default(10_000),
  ledger: z.string().default(""),
  allowUnauthenticatedRemote: z.boolean().default(false),
  councilSize: z.number().int().positive().optional(),
  passApiKeys: z.boolean().default(false),
  heartbeatMs: z.number().int().positive().default(5000),
  telemetryMs: z.number().int().positive().default(2000),
  keepAliveMs: z.number().int().positive().default(3000),
  maxBodyBytes: z.number().int().positive().default(32 * 1024 * 1024),
  judge: AgentSchema.partial({ runner: true, model: true }).optional(),
  defaultAgents: z.array(AgentSchema).min(1).optional(),
  pricing: z.record(z.string(), PriceSchema).default({}),
});
export type ConfigFile = z.input<typeof ConfigSchema>;

/** The effective, frozen configuration every module reads. */
export interface Config extends Omit<z.infer<typeof ConfigSchema>, "defaultAgents" | "judge"> {
  /** Where the file came from, or null when none was found. */
  configPath: string | null;
  /** Never empty after `resolveAgents`; may be empty when no CLI was found on PATH. */
  defaultAgents: AgentConfig[];
  judge?: Partial<AgentEntry>;
  /** Number of children for a fanned-out turn. */
  councilSize: number;
}

/** A configuration problem: a clear one-line message, exit code 2 at the CLI. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Default model per runner when `defaultAgents` is not configured. */
export const DEFAULT_MODELS: Record<(typeof RUNNERS)[number], string> = {
  claude: "opus",
  codex: "gpt-5.5",
  gemini: "gemini-2.5-pro",
  command: "default",
};

type Env = (name: string) => string | undefined;

/** Turns a zod issue into `path: "value" is not one of a, b` style text. */
function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const path = issue.path.reduce<string>(
    (acc, key) =>
      typeof key === "number" ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key),
    "",
  );
  const value = issue.path.reduce<unknown>(
    (
      v,
      k,
    ) => (v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    input,
  );
  const shown = value === undefined ? "" : `${JSON.stringify(value)} `;
  switch (issue.code) {
    case "invalid_value":
      return `${path}: ${shown}is not one of ${issue.values.map(String).join(", ")}`;
    case "unrecognized_keys":
      return `${path ? path + ": " : ""}unknown key${issue.keys.length > 1 ? "s" : ""} ${
        issue.keys.join(", ")
      }`;
    default:
      return `${path || "(root)"}: ${shown}${shown ? "is invalid: " : ""}${issue.message}`;
  }
}

/** Validates a plain object (file contents overlaid with env) into the schema output. */
export function parseConfigObject(input: unknown): z.infer<typeof ConfigSchema> {
  const result = ConfigSchema.safeParse(input ?? {});
  if (!result.success) {
    throw new ConfigError(`config: ${describeIssue(result.error.issues[0], input)}`);
  }
  return result.data;
}

function parseIntEnv(name: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`config: ${name}: ${JSON.stringify(raw)} is not a whole number`);
  }
  return Number(raw.trim());
}

/** Overlays the `SVC_*` variables of SPEC §2.5 onto the file's object. */
export function applyEnv(file: Record<string, unknown>, env: Env): Record<string, unknown> {
  const out: Record<string, unknown> = { ...file };
  const host = env("SVC_GATEWAY_HOST");
  if (host) out.host = host;
  const portRaw = env("SVC_GATEWAY_PORT");
  if (portRaw) out.port = parseIntEnv("SVC_GATEWAY_PORT", portRaw);
  const token = env("SVC_GATEWAY_TOKEN");
  if (token) out.token = token;
  if (env("SVC_PASS_API_KEYS") !== undefined) out.passApiKeys = env("SVC_PASS_API_KEYS") === "1";
  const level = env("SVC_LOG_LEVEL");
  if (level) out.logLevel = level.toLowerCase();
  if (env("SVC_LOG_JSON") !== undefined) out.logJson = env("SVC_LOG_JSON") === "1";
  const detail = env("SVC_PROGRESS_DETAIL");
  if (detail) out.progressDetail = detail;
  const heartbeat = env("SVC_HEARTBEAT_MS");
  if (heartbeat) out.heartbeatMs = parseIntEnv("SVC_HEARTBEAT_MS", heartbeat);
  const telemetry = env("SVC_TELEMETRY_MS");
  if (telemetry) out.telemetryMs = parseIntEnv("SVC_TELEMETRY_MS", telemetry);
  return out;
}

/** Candidate config file paths, in lookup order (DESIGN.md "External interface"). */
export function configCandidates(explicit: string | undefined, env: Env): string[] {
  if (explicit) return [explicit];
  const fromEnv = env("SVC_CONFIG");
  if (fromEnv) return [fromEnv];
  const xdg = env("XDG_CONFIG_HOME") || (env("HOME") ? `${env("HOME")}/.config` : undefined);
  return ["./council.yaml", ...(xdg ? [`${xdg}/council-gateway/config.yaml`] : [])];
}

/** Reads and parses the YAML file; an explicit path that does not exist is an error. */
export function readConfigFile(
  explicit: string | undefined,
  env: Env,
): { path: string | null; data: Record<string, unknown> } {
  const candidates = configCandidates(explicit, env);
  for (const [i, path] of candidates.entries()) {
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (err) {
      const mustExist = i === 0 && (explicit !== undefined || env("SVC_CONFIG") !== undefined);
      if (err instanceof Deno.errors.NotFound && !mustExist) continue;
      throw new ConfigError(`config: cannot read ${path}: ${(err as Error).message}`);
    }
    let data: unknown;
    try {
      data = YAML.parse(text);
    } catch (err) {
      throw new ConfigError(
        `config: ${path}: invalid YAML: ${(err as Error).message.split("\n")[0]}`,
      );
    }
    if (data === null || data === undefined) return { path, data: {} };
    if (typeof data !== "object" || Array.isArray(data)) {
      throw new ConfigError(`config: ${path}: the top level must be a mapping of keys`);
    }
    return { path, data: data as Record<string, unknown> };
  }
  return { path: null, data: {} };
}

/** Gives every agent a display name, making duplicates unique (`claude`, `claude-2`). */
export function nameAgents(entries: AgentEntry[]): AgentConfig[] {
  const seen = new Map<string, number>();
  return entries.map((entry) => {
    const base = entry.name ?? entry.runner;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return { ...entry, name: n === 1 ? base : `${base}-${n}` };
  });
}

/** Finds an executable on PATH; returns its absolute path or null. */
export function findOnPath(command: string, env: Env): string | null {
  if (command.includes("/")) {
    try {
      return Deno.statSync(command).isFile ? command : null;
    } catch {
      return null;
    }
  }
  for (const dir of (env("PATH") ?? "").split(Deno.build.os === "windows" ? ";" : ":")) {
    if (!dir) continue;
    const candidate = `${dir}/${command}`;
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch { /* not here */ }
  }
  return null;
}

/** When no agents are configured: the claude / codex / gemini CLIs found on PATH. */
export function discoverAgents(env: Env): AgentEntry[] {
  return (["claude", "codex", "gemini"] as const)
    .filter((runner) => findOnPath(runner, env) !== null)
    .map((runner) => AgentSchema.parse({ runner, model: DEFAULT_MODELS[runner] }));
}

export interface LoadOptions {
  /** `--config FILE` */
  configPath?: string;
  /** CLI flag overrides (`--host`, `--port`), applied over env. */
  overrides?: { host?: string; port?: number };
  env?: Env;
}

/** Loads the effective configuration. Throws ConfigError with a one-line message. */
export function loadConfig(options: LoadOptions = {}): Readonly<Config> {
  const env: Env = options.env ?? ((name) => Deno.env.get(name));
  const file = readConfigFile(options.configPath, env);
  const merged = applyEnv(file.data, env);
  if (options.overrides?.host !== undefined) merged.host = options.overrides.host;
  if (options.overrides?.port !== undefined) merged.port = options.overrides.port;
  const parsed = parseConfigObject(merged);
  const agents = nameAgents(parsed.defaultAgents ?? discoverAgents(env));
  const config: Config = {
    ...parsed,
    configPath: file.path,
    defaultAgents: agents,
    councilSize: parsed.councilSize ?? Math.max(agents.length, 1),
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
