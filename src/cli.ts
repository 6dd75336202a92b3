/**
 * The command line: parsing, then one command (`serve` by default), its errors turned into the
 * exit code. Exit codes: 0 ok, 1 runtime failure, 2 usage or config error (one line on stderr);
 * `status` exits 3 when no gateway runs.
 */
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { ListenError } from "./server.ts";
import { VERSION } from "./version.ts";
import { COMMANDS, parseCommandLine, type Parsed, UsageError } from "./cli/args.ts";
import {
  connect,
  daemon,
  doctor,
  expectNoPositionals,
  init,
  launch,
  type Load,
  showConfig,
  statusline,
  usage,
} from "./cli/commands.ts";
import { HELP, PROGRAM } from "./cli/help.ts";
import type { CliIo } from "./cli/io.ts";
import { serveCommand } from "./cli/serve.ts";

export { HELP, PROGRAM } from "./cli/help.ts";
export { parseCommandLine, UsageError } from "./cli/args.ts";
export { type CliIo, systemIo } from "./cli/io.ts";
import { systemIo } from "./cli/io.ts";

/** Set once a configuration is loaded: stack traces are shown only at logLevel debug. */
let debugErrors = false;

function loader(args: Parsed, io: CliIo): Load {
  return () => {
    const config: Readonly<Config> = loadConfig({
      configPath: args.config,
      overrides: { host: args.host, port: args.port },
      env: io.env,
      cwd: io.cwd,
    });
    debugErrors = config.logLevel === "debug";
    return config;
  };
}

function run(args: Parsed, io: CliIo): number | Promise<number> {
  const load = loader(args, io);
  switch (args.command) {
    case "serve":
      expectNoPositionals(args);
      return serveCommand(load, io.env);
    case "start":
    case "stop":
    case "restart":
    case "status":
    case "logs":
      return daemon(args, io, load);
    case "claude":
    case "codex":
      return launch(args, io, load);
    case "doctor":
      return doctor(args, io, load);
    case "connect":
      return connect(args, io, load);
    case "statusline":
      return statusline(args, io, load);
    case "init":
      return init(args, io);
    case "config":
      return showConfig(args, io, load);
    case "usage":
      return usage(args, io, load);
    case "version":
      expectNoPositionals(args);
      io.stdout(`${PROGRAM} ${VERSION}\n`);
      return 0;
  }
}

/** Runs the CLI and returns the exit code; never throws. */
export async function runCli(argv: string[], io: CliIo = systemIo): Promise<number> {
  let args: Parsed | undefined;
  debugErrors = false;
  try {
    args = parseCommandLine(argv);
    if (args.version && !args.help) {
      io.stdout(`${PROGRAM} ${VERSION}\n`);
      return 0;
    }
    if (args.help) {
      const named = argv.some((a) => (COMMANDS as readonly string[]).includes(a));
      io.stdout(named ? HELP[args.command] : HELP.main);
      return 0;
    }
    return await run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      const topic = args && args.command !== "serve" ? ` ${args.command}` : "";
      io.stderr(`${PROGRAM}: ${err.message} (see '${PROGRAM}${topic} --help')\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    const message = err instanceof ListenError ? err.message : `${(err as Error)?.message ?? err}`;
    io.stderr(`${PROGRAM}: ${message}\n`);
    if (debugErrors && err instanceof Error && err.stack) {
      io.stderr(`${err.stack}\n`);
    }
    return 1;
  }
}
