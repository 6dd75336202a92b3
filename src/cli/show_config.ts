/**
 * `config`: the effective configuration as YAML, with secrets masked.
 */
import YAML from "yaml";
import type { Config } from "../config.ts";

export const MASK = "***";

/** Names of agent `env` entries whose values are treated as secrets. */
const SECRET_NAME = /key|token|secret|pass|auth|cred/i;

function maskEnv(env: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!env) return env;
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, SECRET_NAME.test(k) ? MASK : v]),
  );
}

/** The effective configuration as a plain object in schema key order, secrets masked. */
export function maskedConfig(config: Readonly<Config>): Record<string, unknown> {
  const { configPath: _path, agentsSource: _source, token, judge, defaultAgents, ...rest } = config;
  const { host, port, ...others } = rest;
  return {
    host,
    port,
    ...(token ? { token: MASK } : {}),
    ...others,
    ...(judge ? { judge: { ...judge, env: maskEnv(judge.env) } } : {}),
    defaultAgents: defaultAgents.map((a) => ({ ...a, env: maskEnv(a.env) })),
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
