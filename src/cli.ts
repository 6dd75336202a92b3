/**
 * The command line: `serve` (default), `doctor`, `connect claude|codex`, `config`, `usage`,
 * `version`.
 * Exit codes: 0 ok, 1 runtime failure, 2 usage or config error (one line on stderr).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { bindPolicyProblem } from "./auth.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { collectSecrets, setupLogging } from "./log.ts";
import { apiKeyVariables } from "./secret_variables.ts";
import { ListenError, startServer } from "./server.ts";
import { VERSION } from "./version.ts";
import { claudeExports, codexEnv, codexInstructions, codexToml } from "./cli/connect.ts";
import { runDoctor } from "./cli/doctor.ts";
import { renderConfig } from "./cli/show_config.ts";
import { renderUsage, summarizeLedger } from "./cli/usage.ts";

export const PROGRAM = "council-gateway";

/** What the CLI touches, injectable for tests. */
export interface CliIo {
  env: (name: string) => string | undefined;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A wrong command line: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

const COMMON_HELP = `  --config FILE   configuration file (default: $SVC_CONFIG, ./council.yaml,
                  $XDG_CONFIG_HOME/council-gateway/config.yaml)
  --host HOST     bind host (overrides SVC_GATEWAY_HOST and the file)
  --port PORT     bind port, 0 for an ephemeral one (overrides SVC_GATEWAY_PORT)
  -h, --help      show this help`;

export const HELP: Record<string, string> = {
  main: `${PROGRAM} ${VERSION} — a local model endpoint that answers every prompt with a council
of coding agents (claude, codex, gemini, …).

Usage:
  ${PROGRAM} [serve] [--config FILE] [--host H] [--port P]   run the gateway (default)
  ${PROGRAM} doctor  [--config FILE]   check config, agent CLIs and the bind address
  ${PROGRAM} connect claude|codex      print how to point that host at this gateway
  ${PROGRAM} config  [--config FILE]   print the effective configuration (secrets masked)
  ${PROGRAM} usage   [--ledger FILE] [--json]   spend per day, session and agent
  ${PROGRAM} version                   print the version

Run '${PROGRAM} <command> --help' for a command's options.
Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
`,
  serve: `Usage: ${PROGRAM} [serve] [options]

Runs the gateway on http://HOST:PORT (default 127.0.0.1:6767) serving /v1/messages,
/v1/responses, /v1/messages/count_tokens and /v1/models until SIGINT or SIGTERM.

Options:
${COMMON_HELP}
`,
  doctor: `Usage: ${PROGRAM} doctor [options]

Checks the configuration file, each agent's CLI (found on PATH? its --version) and whether
the bind address is free. Exits 1 when something is wrong.

Options:
${COMMON_HELP}
`,
  connect: `Usage: ${PROGRAM} connect claude|codex [options]

claude: prints shell exports for Claude Code (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, …):
          eval "$(${PROGRAM} connect claude)"
codex:  prints a config.toml provider block and the export of its token variable.
          --toml   print only the config.toml lines
          --env    print only the shell export

Options:
${COMMON_HELP}
`,
  config: `Usage: ${PROGRAM} config [options]

Prints the effective configuration (defaults < file < SVC_* env < flags) as YAML, with the
token and secret-looking agent env values masked.

Options:
${COMMON_HELP}
`,
  usage: `Usage: ${PROGRAM} usage [--ledger FILE] [--config FILE] [--json]

Summarises the turn ledger (config \`ledger\`, one JSON line per finished turn): totals, then
spend per day (UTC), per session and per agent. Exits 1 when the ledger cannot be read.

Options:
  --ledger FILE   the ledger to read (default: the configuration's \`ledger\`)
  --config FILE   configuration file whose \`ledger\` is used (lookup as for serve)
  --json          print the summary as JSON instead of tables
  -h, --help      show this help
`,
  version: `Usage: ${PROGRAM} version

Prints the version.
`,
};

const COMMANDS = ["serve", "doctor", "connect", "config", "usage", "version"] as const;
type Command = (typeof COMMANDS)[number];

interface Parsed {
  command: Command;
  help: boolean;
  version: boolean;
  config?: string;
  host?: string;
  port?: number;
  positionals: string[];
  toml: boolean;
  env: boolean;
  ledger?: string;
  json: boolean;
}

function parsePort(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new UsageError(`--port: ${JSON.stringify(raw)} is not a port number (0-65535)`);
  }
  return Number(raw);
}

/** Parses argv into a command and its options; throws UsageError. */
export function parseCommandLine(argv: string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: "string" },
        host: { type: "string" },
        port: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "V" },
        toml: { type: "boolean" },
        env: { type: "boolean" },
        ledger: { type: "string" },
        json: { type: "boolean" },
      },
    });
  } catch (err) {
    const option = /'(-[^']*)'/.exec((err as Error).message)?.[1];
    const code = (err as { code?: string }).code;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) {
      throw new UsageError(`unknown option ${option}`);
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) {
      throw new UsageError(`option ${option.split(" ")[0]} needs a value`);
    }
    throw new UsageError((err as Error).message.split(".")[0]);
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  let command: Command = "serve";
  if (first !== undefined) {
    if (!(COMMANDS as readonly string[]).includes(first)) {
      throw new UsageError(`unknown command ${JSON.stringify(first)}`);
    }
    command = first as Command;
  }
  return {
    command,
    help: values.help ?? false,
    version: values.version ?? false,
    config: values.config,
    host: values.host,
    port: values.port === undefined ? undefined : parsePort(values.port),
    positionals: rest,
    toml: values.toml ?? false,
    env: values.env ?? false,
    ledger: values.ledger,
    json: values.json ?? false,
  };
}

function expectNoPositionals(args: Parsed): void {
  if (args.positionals.length > 0) {
    throw new UsageError(`${args.command}: unexpected argument ${args.positionals[0]}`);
  }
}

/** Set once a configuration is loaded: stack traces are shown only at logLevel debug. */
let debugErrors = false;

function load(args: Parsed, io: CliIo): Readonly<Config> {
  const config = loadConfig({
    configPath: args.config,
    overrides: { host: args.host, port: args.port },
    env: io.env,
    cwd: io.cwd,
  });
  debugErrors = config.logLevel === "debug";
  return config;
}

async function serve(args: Parsed, io: CliIo): Promise<number> {
  expectNoPositionals(args);
  const config = load(args, io);
  const problem = bindPolicyProblem(config);
  if (problem) throw new ConfigError(problem);
  setupLogging({
    level: config.logLevel,
    json: config.logJson,
    secrets: collectSecrets(
      config.token,
      io.env,
      apiKeyVariables([...config.defaultAgents, config.judge]),
    ),
  });
  const server = startServer(config, { handleSignals: true });
  await server.finished;
  return 0;
}

async function doctor(args: Parsed, io: CliIo): Promise<number> {
  expectNoPositionals(args);
  const report = await runDoctor(load(args, io), io.env);
  io.stdout(report.text);
  return report.problems.length === 0 ? 0 : 1;
}

function connect(args: Parsed, io: CliIo): number {
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
  if (args.toml && args.env) throw new UsageError("connect codex: use --toml or --env, not both");
  const config = load(args, io);
  if (config.port === 0) {
    throw new UsageError(
      "connect: the configured port is 0 (ephemeral); pass --port with the port the gateway " +
        "listens on",
    );
  }
  io.stdout(
    host === "claude"
      ? claudeExports(config)
      : args.toml
      ? codexToml(config)
      : args.env
      ? codexEnv(config)
      : codexInstructions(config),
  );
  return 0;
}

function showConfig(args: Parsed, io: CliIo): number {
  expectNoPositionals(args);
  io.stdout(renderConfig(load(args, io)));
  return 0;
}

function usage(args: Parsed, io: CliIo): number {
  expectNoPositionals(args);
  if (args.host !== undefined || args.port !== undefined) {
    throw new UsageError("usage: --host and --port do not apply");
  }
  const path = args.ledger ?? load(args, io).ledger;
  if (!path) {
    throw new ConfigError(
      "usage: no ledger configured: set `ledger` in the configuration or pass --ledger FILE",
    );
  }
  const absolute = resolve(io.cwd, path);
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

const encoder = new TextEncoder();

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
}

export const systemIo: CliIo = {
  env: (name) => Deno.env.get(name),
  cwd: Deno.cwd(),
  stdout: (text) => writeAll(Deno.stdout, text),
  stderr: (text) => writeAll(Deno.stderr, text),
};

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
      io.stdout(
        argv.some((a) => (COMMANDS as readonly string[]).includes(a))
          ? HELP[args.command]
          : HELP.main,
      );
      return 0;
    }
    switch (args.command) {
      case "serve":
        return await serve(args, io);
      case "doctor":
        return await doctor(args, io);
      case "connect":
        return connect(args, io);
      case "config":
        return showConfig(args, io);
      case "usage":
        return usage(args, io);
      case "version":
        expectNoPositionals(args);
        io.stdout(`${PROGRAM} ${VERSION}\n`);
        return 0;
    }
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
