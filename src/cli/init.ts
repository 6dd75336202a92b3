/**
 * `init`: a commented starter configuration whose council is the agent CLIs found on PATH; every
 * other key is shown commented out with its default.
 */
import { join } from "node:path";
import { ConfigSchema } from "../config/mod.ts";
import { discoverableClis } from "../agents/cli/runners.ts";
import { findOnPath } from "../base/executables.ts";

type Env = (name: string) => string | undefined;

/** Where `init` writes when no `--config` is given: the user-wide file `serve` looks up last. */
export function defaultConfigPath(env: Env): string {
  const home = env("HOME") || env("USERPROFILE");
  const xdg = env("XDG_CONFIG_HOME") || (home ? join(home, ".config") : undefined);
  if (!xdg) throw new Error("neither XDG_CONFIG_HOME nor HOME is set: pass --config FILE");
  return join(xdg, "council-gateway", "config.yaml");
}

/** A commented-out setting, its note aligned with the others'. */
function setting(key: string, value: unknown, note?: string): string {
  const line = `# ${key}: ${value}`;
  return note ? `${line.padEnd(28)} # ${note}` : line;
}

const HOST_CLIS = discoverableClis();

/** The starter file's text, for the CLIs `find` locates (their path, or null). */
export function starterConfig(find: (command: string) => string | null, today: string): string {
  const d = ConfigSchema.parse({});
  const found = HOST_CLIS.filter((cli) => find(cli.command) !== null);
  const missing = HOST_CLIS.filter((cli) => !found.includes(cli));
  const agents = found.flatMap(({ runner, command, model }) => [
    `  - runner: ${runner}`,
    `    model: ${model}`,
    `    # command: ${find(command)}`,
  ]);
  const absent = missing.flatMap(({ runner, model }) => [
    `#  - runner: ${runner}`.padEnd(28) + " # not found on PATH when this file was written",
    `#    model: ${model}`,
  ]);
  return [
    `# council-gateway configuration, written by \`council-gateway init\` on ${today}.`,
    '# Every key is optional: a commented line shows the default. README "Configuration" lists',
    "# them all. A running gateway reloads this file when it changes (and on SIGHUP); host and",
    "# port apply at the next start.",
    "",
    "# Where the gateway listens. Children run full-auto: keep it on loopback, or set a token.",
    setting("host", d.host),
    setting("port", d.port),
    setting("token", '""', "or SVC_GATEWAY_TOKEN; clients present it as a bearer token"),
    "",
    "# When the council convenes and how much it may spend.",
    setting("fanOutPolicy", d.fanOutPolicy, "always | auto | necessary | never"),
    setting("fanOutScope", d.fanOutScope, "first-turn | every-turn"),
    setting("maxTurns", d.maxTurns, "per session"),
    setting("maxSessionUsd", d.maxSessionUsd, "spend cap per session in USD; 0 = none"),
    setting("ledger", '""', "a JSONL file of every turn: spend survives restarts"),
    "",
    "# What the host sees while the council works.",
    setting("streamProgress", d.streamProgress),
    setting("progressDetail", d.progressDetail, "telemetry | interleaved"),
    setting("logLevel", d.logLevel, "debug | info | warn | error"),
    "",
    "# The council, in order: entry 0 is also the synthesizer.",
    ...(found.length ? ["defaultAgents:", ...agents, ...absent] : [
      `# No agent CLI (${
        HOST_CLIS.map((cli) => cli.runner).join(", ")
      }) was found on PATH: install one, then uncomment it.`,
      "# defaultAgents:",
      ...absent,
    ]),
    "",
  ].join("\n");
}

interface InitOptions {
  path: string;
  force: boolean;
  env: Env;
  today?: string;
}

/** Writes the starter file; refuses to replace an existing one without `force`. */
export function writeStarterConfig(options: InitOptions): { path: string; agents: string[] } {
  const today = options.today ?? new Date().toISOString().slice(0, 10);
  const find = (command: string) => findOnPath(command, options.env);
  const text = starterConfig(find, today);
  try {
    Deno.statSync(options.path);
    if (!options.force) {
      throw new InitError(`${options.path} already exists (pass --force to replace it)`);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  Deno.mkdirSync(join(options.path, ".."), { recursive: true });
  Deno.writeTextFileSync(options.path, text);
  const agents = HOST_CLIS.filter((cli) => find(cli.command) !== null).map((cli) => cli.runner);
  return { path: options.path, agents };
}

/** `init` cannot write where it was asked to. */
export class InitError extends Error {
  override name = "InitError";
}
