/**
 * `config`: the effective configuration as YAML, with secrets masked.
 */
import YAML from "yaml";
import type { Config } from "../config/mod.ts";
import { displayUrl } from "../store/url.ts";

const MASK = "***";

/** Names of agent `env` entries and HTTP `headers` whose values are treated as secrets. */
const SECRET_NAME = /key|token|secret|pass|auth|cred/i;

function maskEnv(env: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!env) return env;
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, SECRET_NAME.test(k) ? MASK : v]),
  );
}

/** An agent entry with its `env` and HTTP `headers` secrets masked. */
function maskAgent<T extends { env?: Record<string, string>; headers?: Record<string, string> }>(
  agent: T,
): T {
  return {
    ...agent,
    env: maskEnv(agent.env),
    ...(agent.headers ? { headers: maskEnv(agent.headers) } : {}),
  };
}

/** The effective configuration as a plain object in schema key order, secrets masked. */
function maskedConfig(config: Readonly<Config>): Record<string, unknown> {
  const { configPath: _path, agentsSource: _source, token, judge, defaultAgents, ...rest } = config;
  const { host, port, ...others } = rest;
  return {
    host,
    port,
    ...(token ? { token: MASK } : {}),
    ...others,
    ...(others.database ? { database: displayUrl(others.database) } : {}),
    ...(judge ? { judge: maskAgent(judge) } : {}),
    defaultAgents: defaultAgents.map(maskAgent),
  };
}

/** YAML text with a header saying where it came from. */
export function renderConfig(config: Readonly<Config>): string {
  const header = [
    `# council-gateway effective configuration (secrets masked)`,
    `# file: ${config.configPath ?? "(none: defaults)"}; SVC_* environment applied`,
  ];
  if (config.agentsSource === "path") {
    header.push("# defaultAgents: not configured; these CLIs were found on PATH");
  }
  return header.join("\n") + "\n" + YAML.stringify(maskedConfig(config));
}
