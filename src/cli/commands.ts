/**
 * Each command of the command line, given its parsed arguments, its I/O and the configuration
 * loader: it prints what it has to say and returns the exit code.
 */
import { resolve } from "node:path";
import { type Config, ConfigError } from "../config/mod.ts";
import { daemonPaths } from "../daemon/paths.ts";
import { selfCommandLine } from "../daemon/self.ts";
import { type Parsed, serveArgsOf, UsageError } from "./args.ts";
import {
  claudeExports,
  claudeStatusLineSettings,
  codexEnv,
  codexInstructions,
  codexToml,
} from "./connect.ts";
import {
  type DaemonContext,
  ensureGateway,
  logsCommand,
  restartCommand,
  startCommand,
  statusCommand,
  stopCommand,
} from "./daemon_commands.ts";
import { runDoctor } from "./doctor.ts";
import { defaultConfigPath, InitError, starterConfig, writeStarterConfig } from "./init.ts";
import type { CliIo } from "./io.ts";
import { claudeLaunch, codexLaunch, runHost } from "./launch.ts";
import { renderConfig } from "./show_config.ts";
import { renderUsage, summarizeEntries, summarizeLedger } from "./usage_command.ts";
import { connectStore, StoreError } from "../store/open_store.ts";
import { renderSeats } from "./seats_text.ts";
import { readSeatRecords } from "../ledger/records_file.ts";
import {
  SEAT_WINDOWS,
  seats,
  seatSentence,
  type SeatWindow,
  windowStart,
} from "../ledger/seats.ts";
import { findOnPath } from "../base/executables.ts";

export type Load = () => Readonly<Config>;

export function expectNoPositionals(args: Parsed): void {
  if (args.positionals.length > 0) {
    throw new UsageError(`${args.command}: unexpected argument ${args.positionals[0]}`);
  }
}

export async function doctor(args: Parsed, io: CliIo, load: Load): Promise<number> {
  expectNoPositionals(args);
  const report = await runDoctor(load(), io.env);
  io.stdout(report.text);
  return report.problems.length === 0 ? 0 : 1;
}

/** The status line command with the options that find this configuration again. */
function statusLineCommand(args: Parsed, config: Readonly<Config>): string {
  return selfCommandLine(
    "statusline",
    ...(config.configPath ? ["--config", config.configPath] : []),
    ...(args.host !== undefined ? ["--host", args.host] : []),
    ...(args.port !== undefined ? ["--port", String(args.port)] : []),
  );
}

export function connect(args: Parsed, io: CliIo, load: Load): number {
  const [host, ...extra] = args.positionals;
  if (host !== "claude" && host !== "codex") {
    throw new UsageError(
      host === undefined
        ? "connect: which host? connect claude | connect codex"
        : `connect: unknown host ${JSON.stringify(host)} (expected claude or codex)`,
    );
  }
  if (extra.length) throw new UsageError(`connect: unexpected argument ${extra[0]}`);
  if (host === "claude" && (args.toml || args.env)) {
    throw new UsageError("connect claude: --toml and --env apply to codex only");
  }
  if (host === "codex" && args.settings) {
    throw new UsageError("connect codex: --settings applies to claude only");
  }
  if (args.toml && args.env) throw new UsageError("connect codex: use --toml or --env, not both");
  const config = load();
  if (config.port === 0) {
    throw new UsageError(
      "connect: the configured port is 0 (ephemeral); pass --port with the port the gateway " +
        "listens on",
    );
  }
  if (host === "claude") {
    const command = statusLineCommand(args, config);
    io.stdout(
      args.settings
        ? `${JSON.stringify(claudeStatusLineSettings(command), null, 2)}\n`
        : claudeExports(config, command),
    );
    return 0;
  }
  io.stdout(
    args.toml ? codexToml(config) : args.env ? codexEnv(config) : codexInstructions(config),
  );
  return 0;
}

export function showConfig(args: Parsed, io: CliIo, load: Load): number {
  expectNoPositionals(args);
  io.stdout(renderConfig(load()));
  return 0;
}

export function usage(args: Parsed, io: CliIo, load: Load): number | Promise<number> {
  expectNoPositionals(args);
  if (args.host !== undefined || args.port !== undefined) {
    throw new UsageError("usage: --host and --port do not apply");
  }
  if (!args.agents && args.window !== undefined) {
    throw new UsageError("usage: --window needs --agents");
  }
  const config = args.ledger === undefined ? load() : undefined;
  if (config?.database) return usageFromDatabase(args, io, config);
  const path = args.ledger ?? config?.ledger;
  if (!path) {
    throw new ConfigError(
      "usage: no ledger configured: set `ledger` in the configuration or pass --ledger FILE",
    );
  }
  const absolute = resolve(io.cwd, path);
  if (args.agents) return usageSeats(args, io, absolute, args.ledger ? undefined : load);
  let summary;
  try {
    summary = summarizeLedger(absolute);
  } catch (err) {
    const reason = err instanceof Deno.errors.NotFound ? "file not found" : (err as Error).message;
    throw new Error(`usage: cannot read ledger ${absolute}: ${reason}`);
  }
  io.stdout(args.json ? `${JSON.stringify(summary, null, 2)}\n` : renderUsage(summary));
  return 0;
}

function seatWindowOf(args: Parsed): SeatWindow {
  const window = args.window ?? "all";
  if (!(SEAT_WINDOWS as readonly string[]).includes(window)) {
    throw new UsageError(`usage: --window ${JSON.stringify(window)}: use today, 7d or all`);
  }
  return window as SeatWindow;
}

/**
 * `usage` with a shared database: the same summaries, fed from its ledger rows (turn entries of
 * the window only, filtered in SQL).
 */
async function usageFromDatabase(args: Parsed, io: CliIo, config: Readonly<Config>) {
  const window = args.agents ? seatWindowOf(args) : "all";
  let store;
  try {
    store = await connectStore(config.database, { max: 1 });
  } catch (err) {
    if (err instanceof StoreError) throw new ConfigError(`usage: ${err.message}`);
    throw err;
  }
  try {
    const start = windowStart(window, Date.now());
    const since = Number.isFinite(start) && start > 0 ? new Date(start).toISOString() : undefined;
    const records = await store.ledger.turnsAndOutcomes(since);
    if (args.agents) {
      const names = config.defaultAgents.map((a) => a.name);
      return printSeats(args, io, store.where, seats(records, window, Date.now(), names), window);
    }
    const entries = records.flatMap((line) => line.kind === "turn" ? [line.entry] : []);
    const summary = summarizeEntries(store.where, entries);
    io.stdout(args.json ? `${JSON.stringify(summary, null, 2)}\n` : renderUsage(summary));
    return 0;
  } finally {
    await store.close();
  }
}

/** `usage --agents`: each member's seat over the window, from the ledger's records. */
function usageSeats(args: Parsed, io: CliIo, ledger: string, load?: Load): number {
  const window = seatWindowOf(args);
  try {
    Deno.statSync(ledger);
  } catch (err) {
    const reason = err instanceof Deno.errors.NotFound ? "file not found" : (err as Error).message;
    throw new Error(`usage: cannot read ledger ${ledger}: ${reason}`);
  }
  const names = load ? load().defaultAgents.map((a) => a.name) : [];
  return printSeats(
    args,
    io,
    ledger,
    seats(readSeatRecords(ledger), window, Date.now(), names),
    window,
  );
}

function printSeats(
  args: Parsed,
  io: CliIo,
  ledger: string,
  rows: ReturnType<typeof seats>,
  window: SeatWindow,
): number {
  if (!args.json) {
    io.stdout(renderSeats(rows, window));
    return 0;
  }
  const agents = rows.map(({ agent, ...seat }) => ({
    agent,
    seat,
    sentence: seatSentence({ agent, ...seat }),
  }));
  io.stdout(`${JSON.stringify({ ledger, window, agents }, null, 2)}
`);
  return 0;
}

function daemonContext(args: Parsed, io: CliIo, load: Load): DaemonContext {
  return {
    config: load(),
    paths: daemonPaths(io.env),
    serveArgs: serveArgsOf(args, (path) => resolve(io.cwd, path)),
    cwd: io.cwd,
    stdout: io.stdout,
    stderr: io.stderr,
  };
}

export function daemon(args: Parsed, io: CliIo, load: Load): Promise<number> {
  expectNoPositionals(args);
  const context = daemonContext(args, io, load);
  switch (args.command) {
    case "start":
      return startCommand(context);
    case "stop":
      return stopCommand(context);
    case "restart":
      return restartCommand(context);
    case "status":
      return statusCommand(context);
    default:
      return logsCommand(context, { lines: args.lines ?? 100, follow: args.follow });
  }
}

/** `claude` / `codex`: the host in this terminal, against a gateway started if need be. */
export async function launch(args: Parsed, io: CliIo, load: Load): Promise<number> {
  const context = daemonContext(args, io, load);
  const origin = await ensureGateway(context);
  if (!origin) return 1;
  const plan = args.command === "claude"
    ? claudeLaunch(context.config, origin, args.hostArgs, statusLineCommand(args, context.config))
    : codexLaunch(context.config, origin, args.hostArgs);
  return await runHost(plan, io.env, io.stderr);
}

export function init(args: Parsed, io: CliIo): number {
  expectNoPositionals(args);
  if (args.stdout) {
    const today = new Date().toISOString().slice(0, 10);
    io.stdout(starterConfig((command) => findOnPath(command, io.env), today));
    return 0;
  }
  const path = args.config ? resolve(io.cwd, args.config) : defaultConfigPath(io.env);
  try {
    const written = writeStarterConfig({ path, force: args.force, env: io.env });
    io.stdout(
      `wrote ${written.path} (council: ${written.agents.join(", ") || "none found on PATH"})\n` +
        `check it with: council-gateway doctor${args.config ? ` --config ${path}` : ""}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof InitError) {
      io.stderr(`council-gateway: init: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
