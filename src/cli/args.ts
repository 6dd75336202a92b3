/**
 * The command line parsed: the command, the gateway's options, and for the host launchers
 * (`claude`, `codex`) the arguments that belong to the host, untouched.
 */
import { parseArgs } from "node:util";

/** A wrong command line: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const COMMANDS = [
  "serve",
  "start",
  "stop",
  "restart",
  "status",
  "logs",
  "claude",
  "codex",
  "doctor",
  "connect",
  "statusline",
  "init",
  "config",
  "usage",
  "eval",
  "keys",
  "version",
] as const;
type Command = (typeof COMMANDS)[number];

/** Commands whose further arguments are their own: the host CLI's, or `eval`'s. */
const LAUNCHERS: ReadonlySet<string> = new Set(["claude", "codex", "eval"]);

export interface Parsed {
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
  settings: boolean;
  follow: boolean;
  lines?: number;
  force: boolean;
  stdout: boolean;
  /** `usage --agents`: each member's seat instead of spend. */
  agents: boolean;
  /** `usage --agents`: today, 7d or all. */
  window?: string;
  /** `keys create`: the key holder's name, budget (dollars, as given) and budget period. */
  name?: string;
  maxUsd?: string;
  period?: string;
  /** For `claude` / `codex` / `eval`: every argument after the command, as given. */
  hostArgs: string[];
}

function parsePort(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new UsageError(`--port: ${JSON.stringify(raw)} is not a port number (0-65535)`);
  }
  return Number(raw);
}

function parseLines(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`--lines: ${JSON.stringify(raw)} is not a count`);
  return Number(raw);
}

const OPTIONS = {
  config: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  toml: { type: "boolean" },
  env: { type: "boolean" },
  ledger: { type: "string" },
  json: { type: "boolean" },
  settings: { type: "boolean" },
  follow: { type: "boolean", short: "f" },
  lines: { type: "string", short: "n" },
  force: { type: "boolean" },
  stdout: { type: "boolean" },
  agents: { type: "boolean" },
  window: { type: "string" },
  name: { type: "string" },
  "max-usd": { type: "string" },
  period: { type: "string" },
} as const;

/** Options that take a value: the word after them is not a command. */
const VALUED = new Set([
  "--config",
  "--host",
  "--port",
  "--ledger",
  "--lines",
  "-n",
  "--window",
  "--name",
  "--max-usd",
  "--period",
  "--window",
]);

/** Where a launcher command starts in argv (-1 when there is none). */
function launcherIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === "--") return -1;
    if (VALUED.has(word)) {
      i++;
      continue;
    }
    if (word.startsWith("-")) continue;
    return LAUNCHERS.has(word) ? i : -1;
  }
  return -1;
}

function parseOptions(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
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
}

/** Parses argv into a command and its options; throws UsageError. */
export function parseCommandLine(argv: string[]): Parsed {
  const launcher = launcherIndex(argv);
  const own = launcher < 0 ? argv : argv.slice(0, launcher + 1);
  const hostArgs = launcher < 0 ? [] : argv.slice(launcher + 1);
  const { values, positionals } = parseOptions(own);
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
    settings: values.settings ?? false,
    follow: values.follow ?? false,
    lines: values.lines === undefined ? undefined : parseLines(values.lines),
    force: values.force ?? false,
    stdout: values.stdout ?? false,
    agents: values.agents ?? false,
    window: values.window,
    name: values.name,
    maxUsd: values["max-usd"],
    period: values.period,
    hostArgs,
  };
}

/** `serve`'s own options as given, for starting it in the background. */
export function serveArgsOf(args: Parsed, resolvePath: (path: string) => string): string[] {
  return [
    ...(args.config ? ["--config", resolvePath(args.config)] : []),
    ...(args.host !== undefined ? ["--host", args.host] : []),
    ...(args.port !== undefined ? ["--port", String(args.port)] : []),
  ];
}
