/**
 * The command line: parsing, then one command (`serve` by default), its errors turned into the
 * exit code.
 */
// Exit codes: 0 ok, 1 runtime failure, 2 usage or config error (one line on stderr); `status`
// exits 3 when no gateway runs.
import { discoverAgents } from "../agents/cli/runners.ts";
import { type Config, ConfigError, loadConfig } from "../config/mod.ts";
import { VERSION } from "../base/version.ts";
import { COMMANDS, parseCommandLine, type Parsed, UsageError } from "./args.ts";
import { HELP, PROGRAM } from "./help.ts";
import { type CliIo, systemIo } from "./io.ts";

export { HELP, PROGRAM } from "./help.ts";
export { parseCommandLine, UsageError } from "./args.ts";
export { type CliIo, systemIo } from "./io.ts";

type Load = () => Readonly<Config>;

/** Set once a configuration is loaded: stack traces are shown only at logLevel debug. */
let debugErrors = false;

function loader(args: Parsed, io: CliIo): Load {
  return () => {
    const config: Readonly<Config> = loadConfig({
      configPath: args.config,
      overrides: { host: args.host, port: args.port },
      env: io.env,
      cwd: io.cwd,
      discover: discoverAgents,
    });
    debugErrors = config.logLevel === "debug";
    return config;
  };
}

function expectNoPositionals(args: Parsed): void {
  if (args.positionals.length > 0) {
    throw new UsageError(`${args.command}: unexpected argument ${args.positionals[0]}`);
  }
}

/**
 * Each command's module is loaded when it runs: the status line, which Claude Code runs every
 * second, then loads only what it needs instead of the whole gateway.
 */
async function run(args: Parsed, io: CliIo): Promise<number> {
  const load = loader(args, io);
  switch (args.command) {
    case "serve":
      expectNoPositionals(args);
      return (await import("./serve_command.ts")).serveCommand(load, io.env);
    case "statusline":
      expectNoPositionals(args);
      return (await import("./statusline/command.ts")).statusline(io, load);
    case "version":
      expectNoPositionals(args);
      io.stdout(`${PROGRAM} ${VERSION}\n`);
      return 0;
    case "keys":
      return (await import("./keys/mod.ts")).keysCommand(args, io, load);
  }
  const commands = await import("./commands.ts");
  switch (args.command) {
    case "start":
    case "stop":
    case "restart":
    case "status":
    case "logs":
      return commands.daemon(args, io, load);
    case "claude":
    case "codex":
      return commands.launch(args, io, load);
    case "doctor":
      return commands.doctor(args, io, load);
    case "connect":
      return commands.connect(args, io, load);
    case "init":
      return commands.init(args, io);
    case "config":
      return commands.showConfig(args, io, load);
    case "usage":
      return commands.usage(args, io, load);
    case "eval":
      return (await import("../eval/mod.ts")).evalCommand(args.hostArgs, io, args);
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
    const message = `${(err as Error)?.message ?? err}`;
    io.stderr(`${PROGRAM}: ${message}\n`);
    if (debugErrors && err instanceof Error && err.stack) {
      io.stderr(`${err.stack}\n`);
    }
    return 1;
  }
}
