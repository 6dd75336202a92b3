/**
 * The daemon commands: `start` (in the background), `stop`, `restart`, `status` and `logs`, and
 * finding (or starting) a gateway for the host launchers.
 */
import type { Config } from "../config/mod.ts";
import { fetchStatus, probeHealth, type StatusView } from "../daemon/gateway_client.ts";
import { logSince, runningDaemon, startDaemon, stopDaemon } from "../daemon/lifecycle.ts";
import type { DaemonPaths } from "../daemon/paths.ts";
import { clientOrigin } from "./connect.ts";
import { healthLines } from "./health_text.ts";
import { shortDuration } from "./statusline/line.ts";

export interface DaemonContext {
  config: Readonly<Config>;
  paths: DaemonPaths;
  /** `serve`'s arguments as the user gave them (`--config`, `--host`, `--port`). */
  serveArgs: string[];
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** `status`'s exit code when no gateway runs (as init scripts' `status` does). */
const NOT_RUNNING = 3;

function lastLines(text: string, count: number): string {
  const lines = text.trimEnd().split("\n");
  return lines.slice(-count).join("\n");
}

/** Where a gateway already answers: the background one, else one on the configured port. */
async function findGateway(
  context: Pick<DaemonContext, "config" | "paths">,
): Promise<{ origin: string; managed: boolean; pid?: number } | null> {
  const daemon = runningDaemon(context.paths);
  if (daemon && (await probeHealth(daemon.origin)).up) {
    return { origin: daemon.origin, managed: true, pid: daemon.pid };
  }
  if (context.config.port === 0) return null;
  const origin = clientOrigin(context.config);
  return (await probeHealth(origin)).up ? { origin, managed: false } : null;
}

export async function startCommand(context: DaemonContext): Promise<number> {
  const found = await findGateway(context);
  if (found) {
    context.stdout(
      found.managed
        ? `council-gateway is already running (pid ${found.pid}) on ${found.origin}\n`
        : `a council gateway already answers on ${found.origin} (started outside \`start\`)\n`,
    );
    return 0;
  }
  const result = await startDaemon({
    paths: context.paths,
    serveArgs: context.serveArgs,
    configPath: context.config.configPath,
    cwd: context.cwd,
  });
  if (result.kind === "failed") {
    context.stderr(`council-gateway: start failed: ${result.reason}\n`);
    if (result.log.trim()) context.stderr(`${lastLines(result.log, 20)}\n`);
    context.stderr(`(log: ${context.paths.log})\n`);
    return 1;
  }
  const { state } = result;
  context.stdout(
    `council-gateway started (pid ${state.pid}) on ${state.origin}\n` +
      `  config: ${state.configPath ?? "defaults"}\n  log:    ${context.paths.log}\n`,
  );
  return 0;
}

export async function stopCommand(context: DaemonContext): Promise<number> {
  const result = await stopDaemon(context.paths);
  if (result.kind === "not-running") {
    const foreign = await findGateway(context);
    context.stdout(
      foreign
        ? `no background gateway; the one on ${foreign.origin} was started outside \`start\`\n`
        : "council-gateway is not running\n",
    );
    return 0;
  }
  context.stdout(
    `council-gateway stopped (pid ${result.pid}${
      result.forced ? ", killed after a time-out" : ""
    })\n`,
  );
  return 0;
}

export async function restartCommand(context: DaemonContext): Promise<number> {
  await stopCommand(context);
  return await startCommand(context);
}

function liveLines(status: StatusView): string[] {
  return status.live.map((turn) => {
    const calls = turn.calls.map((c) => `${c.label} ${c.state} ${shortDuration(c.elapsedMs)}`);
    const decision = turn.decision ? turn.decision.kind : "deciding";
    return `    turn ${turn.turn} (${decision}, ${shortDuration(turn.elapsedMs)}): ${
      calls.join(", ") || "no call yet"
    }`;
  });
}

export async function statusCommand(context: DaemonContext): Promise<number> {
  const found = await findGateway(context);
  if (!found) {
    context.stdout(`council-gateway is not running (log: ${context.paths.log})\n`);
    return NOT_RUNNING;
  }
  const how = found.managed ? `pid ${found.pid}` : "started outside `start`";
  const lines = [`council-gateway is running (${how}) on ${found.origin}`];
  const reply = await fetchStatus(found.origin, { token: context.config.token });
  if (reply.ok) {
    const { status } = reply;
    lines.push(
      `  config:     ${status.configPath ?? "defaults"}`,
      `  uptime:     ${shortDuration(status.uptimeMs)}`,
      `  version:    ${status.version}`,
      `  spend:      $${status.spend.usd.toFixed(4)} over ${status.spend.turns} turns`,
      ...healthLines(status.agents),
      `  live turns: ${status.live.length}`,
      ...liveLines(status),
    );
  } else {
    lines.push(`  (no status: ${reply.reason})`);
  }
  if (found.managed) lines.push(`  log:        ${context.paths.log}`);
  context.stdout(`${lines.join("\n")}\n`);
  return 0;
}

interface LogsOptions {
  /** Lines from the end to print first; 0 = the whole log. */
  lines: number;
  follow: boolean;
  /** Ends `--follow` (tests); Ctrl-C otherwise. */
  signal?: AbortSignal;
  everyMs?: number;
}

function sizeOf(path: string): number | null {
  try {
    return Deno.statSync(path).size;
  } catch {
    return null;
  }
}

export async function logsCommand(context: DaemonContext, options: LogsOptions): Promise<number> {
  const path = context.paths.log;
  let offset = sizeOf(path);
  if (offset === null && !options.follow) {
    context.stderr(`council-gateway: no log yet (${path}): start the gateway with \`start\`\n`);
    return 1;
  }
  if (offset !== null) {
    const text = logSince(path, 0);
    context.stdout(options.lines > 0 ? `${lastLines(text, options.lines)}\n` : text);
  }
  if (!options.follow) return 0;
  offset ??= 0;
  const signal = options.signal;
  while (!signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 250));
    const size = sizeOf(path);
    if (size === null) continue;
    // Rotated or truncated: read the new file from its start.
    if (size < offset) offset = 0;
    if (size > offset) {
      context.stdout(logSince(path, offset));
      offset = size;
    }
  }
  return 0;
}

/** The origin of a running gateway, starting one in the background when none answers. */
export async function ensureGateway(context: DaemonContext): Promise<string | null> {
  const found = await findGateway(context);
  if (found) return found.origin;
  const code = await startCommand({ ...context, stdout: context.stderr });
  if (code !== 0) return null;
  return runningDaemon(context.paths)?.origin ?? null;
}
