/** The lines the gateway logs as it starts: where it listens, what to do next, a missing council. */
import type { Config } from "../config/mod.ts";
import { urlHost } from "../base/origins.ts";
import { discoverableNames } from "../agents/cli/runners.ts";
import { PATHS } from "./app.ts";

/** The startup line of CONTRACT.md §3. */
export function startupLine(config: Readonly<Config>, port: number): string {
  const agents = config.defaultAgents.map((a) => `${a.name}:${a.model}`).join(",") || "none";
  return `listening on http://${urlHost(config.host)}:${port} ` +
    `(${PATHS.messages}, ${PATHS.responses}) ` +
    `fanOutPolicy=${config.fanOutPolicy} fanOutScope=${config.fanOutScope} ` +
    `maxTurns=${config.maxTurns} auth=${config.token ? "on" : "off"} ` +
    `streamProgress=${config.streamProgress} progressDetail=${config.progressDetail} ` +
    `logLevel=${config.logLevel} agents=${agents} config=${config.configPath ?? "defaults"}`;
}

/** What a new user does next: open the dashboard, point a host at the gateway. */
export function nextStepsLine(config: Readonly<Config>, port: number): string {
  const portFlag = port === 6767 ? "" : ` --port ${port}`;
  return `dashboard: http://${urlHost(config.host)}:${port}/ · point a host at it: ` +
    `council-gateway connect claude${portFlag} (or codex)`;
}

/** The warning when there is no council: no agents configured, and no agent CLI on PATH. */
export function noAgentsLine(): string {
  return `no agents: defaultAgents is not configured and no ${discoverableNames()} CLI was ` +
    "found on PATH; every turn will answer with an error until one is";
}
