/**
 * Runs the real gateway (`main.ts serve`, the start task's permission flags) as a subprocess
 * on an ephemeral port, with a YAML config written to a temp dir, and keeps its log lines.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";

export const ROOT = new URL("../../", import.meta.url).pathname;

/** The permission flags of `deno task start`, so tests run what users run. */
export function startTaskFlags(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  const words = String(config.tasks.start).split(/\s+/);
  const flags = words.slice(words.indexOf("run") + 1, words.indexOf("main.ts"))
    .filter((w) => w.startsWith("--"));
  assert.ok(flags.length > 0, `no permission flags found in the start task: ${config.tasks.start}`);
  return flags;
}

/** A minimal environment: nothing of the developer's own config may leak in. */
export function isolatedEnv(dir: string, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, "xdg"),
    NO_COLOR: "1",
  };
  for (const name of ["DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value) env[name] = value;
  }
  if (!env.DENO_DIR) {
    // The test's own cache, so the subprocess does not re-download npm packages into $HOME.
    const home = Deno.env.get("HOME");
    if (home) env.DENO_DIR = join(home, ".cache", "deno");
  }
  return { ...env, ...extra };
}

export interface Gateway {
  origin: string;
  port: number;
  /** Every stdout line so far (the gateway's log). */
  lines(): string[];
  /** SIGTERM, then waits for exit; returns the exit code. */
  stop(): Promise<number>;
}

/** Starts the gateway with `config` (YAML keys) and `env`; resolves once it listens. */
export async function startGateway(
  dir: string,
  config: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<Gateway> {
  const configPath = join(dir, "council.yaml");
  await Deno.writeTextFile(configPath, YAML.stringify({ port: 0, ...config }));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--config",
      join(ROOT, "deno.json"),
      ...startTaskFlags(),
      join(ROOT, "main.ts"),
      "serve",
      "--config",
      configPath,
    ],
    cwd: dir,
    clearEnv: true,
    env: isolatedEnv(dir, env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out: string[] = [];
  let err = "";
  let found!: (origin: string) => void;
  const listening = new Promise<string>((resolve) => (found = resolve));
  const readStdout = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      for (const line of parts) {
        out.push(line);
        const match = /listening on (http:\/\/[^\s"]+)/.exec(line);
        if (match) found(match[1]);
      }
    }
    if (buffer) out.push(buffer);
  })();
  const readStderr = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) err += chunk;
  })();
  const exited = Promise.all([child.status, readStdout, readStderr]).then(([s]) => s.code);
  const origin = await Promise.race([
    listening,
    exited.then((code) => {
      throw new Error(`gateway exited (${code}) before listening:\n${out.join("\n")}\n${err}`);
    }),
  ]);
  return {
    origin,
    port: Number(new URL(origin).port),
    lines: () => [...out],
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      return await exited;
    },
  };
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion with stdin closed (codex waits for EOF otherwise). */
export async function run(
  cmd: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<CommandResult> {
  const child = new Deno.Command(cmd, {
    args,
    cwd: options.cwd,
    clearEnv: true,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, options.timeoutMs ?? 120_000);
  try {
    const out = await child.output();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

/** Parses `export NAME=value` lines (as `connect` prints them) into a map. */
export function parseExports(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (!match) continue;
    let value = match[2];
    if (value.startsWith("'") && value.endsWith("'")) {
      value = value.slice(1, -1).replaceAll(`'\\''`, "'");
    }
    env[match[1]] = value;
  }
  return env;
}

/** Runs `council-gateway connect …` for a gateway on `port`, as a user would. */
export async function connect(
  dir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const result = await run(Deno.execPath(), [
    "run",
    "--config",
    join(ROOT, "deno.json"),
    ...startTaskFlags(),
    join(ROOT, "main.ts"),
    "connect",
    ...args,
  ], { cwd: dir, env: isolatedEnv(dir, env) });
  assert.equal(result.code, 0, `connect ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

/** Parses JSON lines, skipping anything that is not JSON. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim().startsWith("{")) continue;
    try {
      events.push(JSON.parse(line));
    } catch { /* not JSON */ }
  }
  return events;
}
