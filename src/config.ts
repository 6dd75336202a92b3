/**
 * Configuration: the zod schema, its defaults, and loading from a YAML file plus `SVC_*` env.
 *
 * Precedence is env > file > defaults. The result is parsed once and frozen.
 */
import { z } from "zod";
import YAML from "yaml";
import { join, resolve } from "node:path";
import { endpointKey } from "./origins.ts";

/** Runners that spawn an agent CLI. */
export const CLI_RUNNERS = ["claude", "codex", "gemini", "command"] as const;
/** Runners that call a model's HTTP API (a stateless completion, no CLI). */
export const HTTP_RUNNERS = ["anthropic", "openai"] as const;
export const RUNNERS = [...CLI_RUNNERS, ...HTTP_RUNNERS] as const;
export type Runner = (typeof RUNNERS)[number];
export type CliRunner = (typeof CLI_RUNNERS)[number];
export type HttpRunner = (typeof HTTP_RUNNERS)[number];

export function isHttpRunner(runner: Runner): runner is HttpRunner {
  return (HTTP_RUNNERS as readonly string[]).includes(runner);
}
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export const FAN_OUT_POLICIES = ["always", "auto", "necessary", "never"] as const;
export const FAN_OUT_SCOPES = ["first-turn", "every-turn"] as const;
export const PROGRESS_DETAILS = ["telemetry", "interleaved"] as const;

export const DEFAULT_TIMEOUT_MS = 600_000;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether the platform's `Headers` (what fetch sends) accepts this header. */
function accepts(name: string, value: string): boolean {
  try {
    new Headers([[name, value]]);
    return true;
  } catch {
    return false;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

export const AgentSchema = z.strictObject({
  name: z.string().min(1).optional(),
  runner: z.enum(RUNNERS),
  model: z.string().min(1),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().default(DEFAULT_TIMEOUT_MS),
  // HTTP runners only (checkAgents rejects them elsewhere, and command/args/env there).
  /** API root, e.g. https://api.anthropic.com or http://localhost:11434/v1. */
  baseUrl: z.string().refine(isHttpUrl, "must be an http:// or https:// URL").optional(),
  /** The gateway's environment variable holding the API key (never the key itself). */
  apiKeyEnv: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
  /** Extra request headers (e.g. OpenRouter's HTTP-Referer). */
  headers: z.record(z.string(), z.string()).optional(),
  maxTokens: z.number().int().positive().optional(),
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
  /** Extra host names the `Host` header may carry (DNS-rebinding guard), for remote binds. */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** Children work only in directories under these roots (empty: anywhere but system dirs). */
  workspaceRoots: z.array(z.string().min(1)).default([]),
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
  /** Where `defaultAgents` came from: the configuration, or discovery on PATH. */
  agentsSource?: "config" | "path";
}

/** A configuration problem: a clear one-line message, exit code 2 at the CLI. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Default model per runner when `defaultAgents` is not configured. */
export const DEFAULT_MODELS: Record<CliRunner, string> = {
  claude: "opus",
  codex: "gpt-5.5",
  gemini: "gemini-2.5-pro",
  command: "default",
};

type Env = (name: string) => string | undefined;

/** The `SVC_*` variable that set each top-level key (so errors can name it). */
export type EnvSources = Record<string, string>;

/** Allowed keys of the mapping at an issue path, for "unknown key" messages. */
function allowedKeysAt(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(ConfigSchema.shape);
  if (path[0] === "defaultAgents" || path[0] === "judge") return Object.keys(AgentSchema.shape);
  if (path[0] === "pricing") return Object.keys(PriceSchema.shape);
  return [];
}

const TYPE_NAMES: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
};

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) =>
      typeof key === "number" ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key),
    "",
  );
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>(
    (v, k) =>
      v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined,
    input,
  );
}

function showValue(path: readonly PropertyKey[], value: unknown): string {
  if (path[0] === "token") return "(hidden)";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Turns a zod issue into one line naming the key path, the bad value and what is allowed,
 * e.g. `defaultAgents[1].runner: "cladue" is not one of claude, codex, gemini, command`.
 */
export function describeIssue(
  issue: z.core.$ZodIssue,
  input: unknown,
  sources: EnvSources = {},
): string {
  const envName = typeof issue.path[0] === "string" ? sources[issue.path[0]] : undefined;
  const label = (path: readonly PropertyKey[]) => {
    const text = formatPath(path) || "(top level)";
    return envName ? `${text} (from ${envName})` : text;
  };
  const path = label(issue.path);
  const value = valueAt(input, issue.path);
  const shown = showValue(issue.path, value);
  switch (issue.code) {
    case "invalid_value":
      return `${path}: ${shown} is not one of ${issue.values.map(String).join(", ")}`;
    case "unrecognized_keys": {
      const allowed = allowedKeysAt(issue.path);
      const key = issue.keys[0];
      const suggestion = allowed.find((k) => k.toLowerCase() === key.toLowerCase());
      const keyPath = label([...issue.path, key]);
      return `${keyPath}: unknown key${suggestion ? ` (did you mean ${suggestion}?)` : ""}; ` +
        `allowed: ${allowed.join(", ")}`;
    }
    case "invalid_type": {
      const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
      if (value === undefined) return `${path}: is required (${expected})`;
      return `${path}: ${shown} is not ${expected}`;
    }
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "array") {
        return `${path}: must list at least ${min} entr${min === 1 ? "y" : "ies"}`;
      }
      if (issue.origin === "string") return `${path}: must not be empty`;
      return `${path}: ${shown} is too small: must be ${
        issue.inclusive ? "at least" : "more than"
      } ${min}`;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      return `${path}: ${shown} is too big: must be ${
        issue.inclusive ? "at most" : "less than"
      } ${max}`;
    }
    default:
      return `${path}: ${shown} is invalid: ${issue.message}`;
  }
}

/** Validates a plain object (file contents overlaid with env) into the schema output. */
export function parseConfigObject(
  input: unknown,
  sources: EnvSources = {},
): z.infer<typeof ConfigSchema> {
  const result = ConfigSchema.safeParse(input ?? {});
  if (!result.success) {
    throw new ConfigError(`config: ${describeIssue(result.error.issues[0], input, sources)}`);
  }
  return result.data;
}

function parseIntEnv(name: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`config: ${name}: ${JSON.stringify(raw)} is not a whole number`);
  }
  return Number(raw.trim());
}

const TRUE_WORDS = ["1", "true", "yes", "on"];
const FALSE_WORDS = ["0", "false", "no", "off", ""];

function parseFlagEnv(name: string, raw: string): boolean {
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  throw new ConfigError(
    `config: ${name}: ${JSON.stringify(raw)} is not one of 1, 0 (or true, false)`,
  );
}

/** The `SVC_*` variables of SPEC §2.5 and the key each overrides. */
export const ENV_KEYS = {
  SVC_GATEWAY_HOST: "host",
  SVC_GATEWAY_PORT: "port",
  SVC_GATEWAY_TOKEN: "token",
  SVC_PASS_API_KEYS: "passApiKeys",
  SVC_LOG_LEVEL: "logLevel",
  SVC_LOG_JSON: "logJson",
  SVC_PROGRESS_DETAIL: "progressDetail",
  SVC_HEARTBEAT_MS: "heartbeatMs",
  SVC_TELEMETRY_MS: "telemetryMs",
} as const;

/**
 * Overlays the `SVC_*` variables of SPEC §2.5 onto the file's object. An empty variable counts
 * as unset. Returns the merged object and which variable set which key.
 */
export function overlayEnv(
  file: Record<string, unknown>,
  env: Env,
): { merged: Record<string, unknown>; sources: EnvSources } {
  const merged: Record<string, unknown> = { ...file };
  const sources: EnvSources = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env(name);
    if (raw === undefined || raw.trim() === "") continue;
    sources[key] = name;
    switch (key) {
      case "port":
      case "heartbeatMs":
      case "telemetryMs":
        merged[key] = parseIntEnv(name, raw);
        break;
      case "passApiKeys":
      case "logJson":
        merged[key] = parseFlagEnv(name, raw);
        break;
      case "logLevel":
      case "progressDetail":
        merged[key] = raw.trim().toLowerCase();
        break;
      case "token":
        merged[key] = raw;
        break;
      default:
        merged[key] = raw.trim();
    }
  }
  return { merged, sources };
}

/** Overlays the `SVC_*` variables onto the file's object (see `overlayEnv`). */
export function applyEnv(file: Record<string, unknown>, env: Env): Record<string, unknown> {
  return overlayEnv(file, env).merged;
}

/**
 * Candidate config file paths, in lookup order (DESIGN.md "External interface"): `--config`,
 * else `$SVC_CONFIG`, else `./council.yaml`, else `$XDG_CONFIG_HOME/council-gateway/config.yaml`
 * (`~/.config/…` when XDG_CONFIG_HOME is unset). Paths come back absolute.
 */
export function configCandidates(
  explicit: string | undefined,
  env: Env,
  cwd: string = Deno.cwd(),
): string[] {
  if (explicit) return [resolve(cwd, explicit)];
  const fromEnv = env("SVC_CONFIG");
  if (fromEnv) return [resolve(cwd, fromEnv)];
  const home = env("HOME") || env("USERPROFILE");
  const xdg = env("XDG_CONFIG_HOME") || (home ? join(home, ".config") : undefined);
  return [
    resolve(cwd, "council.yaml"),
    ...(xdg ? [resolve(cwd, xdg, "council-gateway", "config.yaml")] : []),
  ];
}

function readError(path: string, err: unknown): ConfigError {
  const reason = err instanceof Deno.errors.NotFound
    ? "file not found"
    : err instanceof Deno.errors.PermissionDenied
    ? "permission denied"
    : err instanceof Deno.errors.IsADirectory
    ? "is a directory"
    : (err as Error).message;
  return new ConfigError(`config: cannot read ${path}: ${reason}`);
}

/**
 * Reads and parses the YAML file. A file named by `--config` or `$SVC_CONFIG` must exist; the
 * default locations are skipped when absent.
 */
export function readConfigFile(
  explicit: string | undefined,
  env: Env,
  cwd: string = Deno.cwd(),
): { path: string | null; data: Record<string, unknown> } {
  const named = Boolean(explicit || env("SVC_CONFIG"));
  for (const path of configCandidates(explicit, env, cwd)) {
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound && !named) continue;
      throw readError(path, err);
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

function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    // mode is null on Windows, where the extension decides.
    return info.isFile && (info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** Finds an executable on PATH (honouring PATHEXT on Windows); its path, or null. */
export function findOnPath(command: string, env: Env): string | null {
  const windows = Deno.build.os === "windows";
  const extensions = windows
    ? ["", ...(env("PATHEXT") ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  if (command.includes("/") || (windows && command.includes("\\"))) {
    return extensions.map((ext) => command + ext).find(isExecutableFile) ?? null;
  }
  for (const dir of (env("PATH") ?? "").split(windows ? ";" : ":")) {
    if (!dir) continue;
    for (const ext of extensions) {
      const candidate = join(dir, command + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

/** When no agents are configured: the claude / codex / gemini CLIs found on PATH. */
export function discoverAgents(env: Env): AgentEntry[] {
  return (["claude", "codex", "gemini"] as const)
    .filter((runner) => findOnPath(runner, env) !== null)
    .map((runner) => AgentSchema.parse({ runner, model: DEFAULT_MODELS[runner] }));
}

/** Fields only HTTP runners use, and fields only CLI runners use. */
const HTTP_FIELDS = ["baseUrl", "apiKeyEnv", "headers", "maxTokens"] as const;
const CLI_FIELDS = ["command", "args", "env"] as const;

/**
 * Rules zod cannot express per entry (checked on the entry as written, so a defaulted field
 * does not count): HTTP fields belong to HTTP runners and CLI fields to CLI runners; a `command`
 * runner must name its executable and an `openai` runner its `baseUrl`. A judge may inherit
 * both from agent 0 when it runs the same runner.
 */
function checkAgentFields(
  path: string,
  entry: Readonly<Record<string, unknown>>,
  runner: Runner,
  inherits = false,
): void {
  const given = (field: string) => entry[field] !== undefined;
  const fail = (field: string, text: string): never => {
    throw new ConfigError(`config: ${path}.${field}: ${text}`);
  };
  if (isHttpRunner(runner)) {
    const headers = entry.headers as Record<string, string> | undefined;
    const badHeader = Object.keys(headers ?? {}).find((name) => !accepts(name, "x"));
    if (badHeader !== undefined) {
      fail("headers", `${JSON.stringify(badHeader)} is not a valid header name`);
    }
    const badValue = Object.entries(headers ?? {}).find(([name, value]) => !accepts(name, value));
    if (badValue !== undefined) {
      fail(
        "headers",
        `the value of ${badValue[0]} has a character a header cannot carry (a line break, ` +
          "NUL, or one beyond Latin-1)",
      );
    }
    const field = CLI_FIELDS.find(given);
    if (field) {
      fail(field, `not used by runner "${runner}" (an HTTP runner calls its baseUrl); remove it`);
    }
    if (runner === "openai" && !inherits && !given("baseUrl")) {
      fail("baseUrl", 'is required when runner is "openai" (e.g. http://localhost:11434/v1)');
    }
  } else {
    const field = HTTP_FIELDS.find(given);
    if (field) {
      fail(field, `only for the HTTP runners (${HTTP_RUNNERS.join(", ")}), not runner "${runner}"`);
    }
    if (runner === "command" && !inherits && !given("command")) {
      fail("command", 'is required when runner is "command"');
    }
  }
}

function entryAt(input: unknown, ...path: PropertyKey[]): Record<string, unknown> {
  const value = valueAt(input, path);
  return value !== null && typeof value === "object" ? value as Record<string, unknown> : {};
}

/** Runs `checkAgentFields` over `defaultAgents` and `judge` of the raw (merged) input. */
function checkAgents(
  input: unknown,
  agents: readonly AgentEntry[],
  judge: Partial<AgentEntry> | undefined,
): void {
  for (const [i, agent] of agents.entries()) {
    checkAgentFields(`defaultAgents[${i}]`, entryAt(input, "defaultAgents", i), agent.runner);
  }
  const base = agents[0]?.runner;
  const runner = judge?.runner ?? base;
  if (judge && runner) {
    checkAgentFields("judge", entryAt(input, "judge"), runner, runner === base);
  }
}

function isWildcardHost(host: string): boolean {
  return ["0.0.0.0", "::", "[::]"].includes(host);
}

/** Every `host:port` key (see `endpointKey`) under which a gateway bound to host:port answers. */
function gatewayEndpoints(host: string, port: number): Set<string> {
  const hosts = [host];
  if (isWildcardHost(host)) {
    try {
      hosts.push(...Deno.networkInterfaces().map((i) => i.address));
    } catch { /* no --allow-sys: loopback spellings are still covered */ }
  }
  const keys = hosts.map((h) => {
    const bracketed = h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
    return endpointKey(`http://${bracketed}:${port}`);
  });
  return new Set(keys.filter((key): key is string => key !== undefined));
}

/**
 * An HTTP agent whose `baseUrl` reaches this gateway would call itself for ever: refused. With
 * port 0 the port is not known yet (the agents layer refuses such a call at run time).
 */
function checkNotSelf(
  agents: readonly AgentEntry[],
  judge: Partial<AgentEntry> | undefined,
  host: string,
  port: number,
): void {
  if (port === 0) return;
  const self = gatewayEndpoints(host, port);
  const entries: [string, Partial<AgentEntry>][] = agents.map((a, i) => [`defaultAgents[${i}]`, a]);
  if (judge) entries.push(["judge", judge]);
  for (const [path, entry] of entries) {
    const key = entry.baseUrl ? endpointKey(entry.baseUrl) : undefined;
    if (key !== undefined && self.has(key)) {
      throw new ConfigError(
        `config: ${path}.baseUrl: ${JSON.stringify(entry.baseUrl)} points at this gateway ` +
          `itself (${host}:${port}); a council member calling the gateway would recurse`,
      );
    }
  }
}

export interface LoadOptions {
  /** `--config FILE` */
  configPath?: string;
  /** CLI flag overrides (`--host`, `--port`), applied over env. */
  overrides?: { host?: string; port?: number };
  env?: Env;
  /** Directory `./council.yaml` and relative paths are resolved against (default: cwd). */
  cwd?: string;
}

/**
 * Loads the effective configuration: flags > env > file > defaults. Throws ConfigError with a
 * one-line message.
 */
export function loadConfig(options: LoadOptions = {}): Readonly<Config> {
  const env: Env = options.env ?? ((name) => Deno.env.get(name));
  const file = readConfigFile(options.configPath, env, options.cwd);
  const { merged, sources } = overlayEnv(file.data, env);
  if (options.overrides?.host !== undefined) {
    merged.host = options.overrides.host;
    sources.host = "--host";
  }
  if (options.overrides?.port !== undefined) {
    merged.port = options.overrides.port;
    sources.port = "--port";
  }
  const parsed = parseConfigObject(merged, sources);
  checkAgents(merged, parsed.defaultAgents ?? [], parsed.judge);
  checkNotSelf(parsed.defaultAgents ?? [], parsed.judge, parsed.host, parsed.port);
  const agents = nameAgents(parsed.defaultAgents ?? discoverAgents(env));
  const config: Config = {
    ...parsed,
    configPath: file.path,
    defaultAgents: agents,
    agentsSource: parsed.defaultAgents ? "config" : "path",
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
