/**
 * Loading the configuration: the YAML file (looked up in order), the `SVC_*` environment and the
 * command-line flags laid over it, validated once, checked across entries, and frozen.
 *
 * Precedence is flags > env > file > defaults.
 */
import YAML from "yaml";
import { join, resolve } from "node:path";
import {
  endpointKey,
  interfaceAddresses,
  isWildcardHost,
  selfOriginsFor,
} from "../base/origins.ts";
import {
  type AgentConfig,
  type AgentEntry,
  AgentSchema,
  type Config,
  ConfigSchema,
} from "./schema.ts";
import { ConfigError, describeIssue, type EnvSources, valueAt } from "./errors.ts";
import type { z } from "zod";

type Env = (name: string) => string | undefined;

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

/** The `SVC_*` variables of CONTRACT.md §2.5 and the key each overrides. */
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
  SVC_DATABASE_URL: "database",
} as const;

/**
 * Overlays the `SVC_*` variables of CONTRACT.md §2.5 onto the file's object. An empty variable counts
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

/**
 * Candidate config file paths, in lookup order (CONTRACT.md §3): `--config`,
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

/** The raw entry at `path` as a mapping ({} when absent). */
function entryAt(input: unknown, ...path: PropertyKey[]): Record<string, unknown> {
  const value = valueAt(input, path);
  return value !== null && typeof value === "object" ? value as Record<string, unknown> : {};
}

/**
 * Checks the judge as an entry of the runner it will run: its own, else agent 0's. Running agent
 * 0's runner it inherits agent 0's `command` and `baseUrl`, so it may leave them out.
 */
function checkJudge(input: unknown, agents: readonly AgentEntry[]): void {
  const judge = entryAt(input, "judge");
  if (valueAt(input, ["judge"]) === undefined) return;
  const base = agents[0];
  const runner = judge.runner ?? base?.runner;
  if (runner === undefined) return;
  const inherited = runner === base?.runner ? { command: base.command, baseUrl: base.baseUrl } : {};
  const entry = { ...inherited, ...judge, runner, model: judge.model ?? base?.model ?? "judge" };
  const result = AgentSchema.safeParse(entry);
  if (result.success) return;
  const issue = result.error.issues[0];
  throw new ConfigError(
    `config: ${describeIssue({ ...issue, path: ["judge", ...issue.path] }, { judge: entry })}`,
  );
}

/** Every `host:port` key (see `endpointKey`) under which a gateway bound to host:port answers. */
function gatewayEndpoints(host: string, port: number): Set<string> {
  const origins = selfOriginsFor(host, port, isWildcardHost(host) ? interfaceAddresses() : []);
  return new Set(origins.map(endpointKey).filter((key): key is string => key !== undefined));
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

interface LoadOptions {
  /** `--config FILE` */
  configPath?: string;
  /** CLI flag overrides (`--host`, `--port`), applied over env. */
  overrides?: { host?: string; port?: number };
  env?: Env;
  /** Directory `./council.yaml` and relative paths are resolved against (default: cwd). */
  cwd?: string;
  /**
   * The agents to use when none are configured (the agent CLIs found on PATH: the runner table's
   * `discoverAgents`, which this layer cannot import); absent: none.
   */
  discover?: (env: Env) => AgentEntry[];
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
  checkJudge(merged, parsed.defaultAgents ?? []);
  checkNotSelf(parsed.defaultAgents ?? [], parsed.judge, parsed.host, parsed.port);
  const agents = nameAgents(parsed.defaultAgents ?? options.discover?.(env) ?? []);
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
