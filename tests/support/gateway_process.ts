/**
 * Runs the real gateway (`main.ts serve`, the start task's permission flags) as a subprocess
 * on an ephemeral port, with a YAML config written to a temp dir, and keeps its log lines.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";

export const ROOT = new URL("../../", import.meta.url).pathname;

/** The flags of `deno task start` (of the checkout at `root`), so tests run what users run. */
export function startTaskFlags(root = ROOT): string[] {
  const config = JSON.parse(Deno.readTextFileSync(join(root, "deno.json")));
  const words = String(config.tasks.start).split(/\s+/);
  const flags = words.slice(words.indexOf("run") + 1, words.indexOf("main.ts"))
    .filter((w) => w.startsWith("--"));
  assert.ok(flags.length > 0, `no permission flags found in the start task: ${config.tasks.start}`);
  return flags;
}

/** `deno run` of this checkout's main.ts with the start task's flags, then `args`. */
export function mainArgs(...args: string[]): string[] {
  return checkoutArgs(ROOT, [], args);
}

/** `deno run` of `root`'s main.ts with `denoFlags` and its start task's flags, then `args`. */
function checkoutArgs(root: string, denoFlags: readonly string[], args: string[]): string[] {
  const flags = startTaskFlags(root);
  return [
    "run",
    "--config",
    join(root, "deno.json"),
    ...denoFlags,
    ...flags,
    join(root, "main.ts"),
    ...args,
  ];
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

/**
 * TMPDIR for a gateway run in `dir`: a directory inside it, so what a gateway killed mid-turn
 * leaves (its socket directory, its children's scratch directories) goes when the test removes
 * `dir`. None (the system's) where a socket path under it could pass the 104-byte limit.
 */
export function gatewayTmpEnv(dir: string): Record<string, string> {
  const tmp = join(dir, "gateway-tmp");
  if (join(tmp, "council-gw-0123456789abcdef", "http-999.sock").length > 100) return {};
  Deno.mkdirSync(tmp, { recursive: true });
  return { TMPDIR: tmp };
}

export interface GatewayProcess {
  pid: number;
  origin: string;
  /** The bound port (from the startup line). */
  port: number;
  /** The log so far, one entry per line. */
  lines(): string[];
  /** Resolves when a log line matches (rejects if the process exits first). */
  waitForLine(pattern: RegExp): Promise<string>;
  kill(signal: Deno.Signal): void;
  /** Exit code once the process has ended and its output is read. */
  exited: Promise<number>;
  /** SIGTERM and wait for the exit; SIGKILL if it has not exited within 15 s. */
  stop(): Promise<number>;
}

export interface SpawnOptions {
  /** Runs under `ulimit -n` (Linux and macOS). */
  fileLimit?: number;
  /** The checkout whose main.ts runs (default: this one). */
  root?: string;
  /** Extra `deno run` flags (e.g. `--cpu-prof`). */
  denoFlags?: readonly string[];
  /** The working directory (default: `dir`). */
  cwd?: string;
}

/**
 * Starts `main.ts serve` with the start task's flags, the YAML `config` (port 0) and an
 * isolated environment; resolves once it listens. stdout is drained continuously (a full
 * pipe would stall the gateway's synchronous log writes).
 */
export async function spawnGateway(
  dir: string,
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<GatewayProcess> {
  const configPath = join(dir, "gateway.yaml");
  await Deno.writeTextFile(configPath, YAML.stringify({ port: 0, ...config }));
  const args = checkoutArgs(options.root ?? ROOT, options.denoFlags ?? [], [
    "serve",
    "--config",
    configPath,
  ]);
  const argv = [Deno.execPath(), ...args];
  // With a file limit, through `sh -c 'ulimit -n N; exec …'` (Linux and macOS).
  const [command, ...commandArgs] = options.fileLimit === undefined
    ? argv
    : ["sh", "-c", `ulimit -n ${options.fileLimit} && exec "$@"`, "sh", ...argv];
  const child = new Deno.Command(command, {
    args: commandArgs,
    cwd: options.cwd ?? dir,
    clearEnv: true,
    env: isolatedEnv(dir, { ...gatewayTmpEnv(dir), ...env }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onLine = (line: string) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  };
  const readStdout = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      parts.forEach(onLine);
    }
    if (buffer) onLine(buffer);
  })();
  const stderr = new Response(child.stderr).text();
  const exited = Promise.all([child.status, readStdout, stderr]).then(([status, , err]) => {
    if (err.trim()) lines.push(`(stderr) ${err.trim()}`);
    return status.code;
  });
  const waitForLine = (pattern: RegExp) => {
    const found = lines.find((line) => pattern.test(line));
    if (found) return Promise.resolve(found);
    return Promise.race([
      new Promise<string>((resolve) => waiters.push({ pattern, resolve })),
      exited.then((code): string => {
        throw new Error(`gateway exited (${code}) before ${pattern}:\n${lines.join("\n")}`);
      }),
    ]);
  };
  const kill = (signal: Deno.Signal) => {
    try {
      child.kill(signal);
    } catch { /* already gone */ }
  };
  const listening = await waitForLine(/listening on http:\/\//);
  const origin = /listening on (http:\/\/\S+)/.exec(listening)![1];
  return {
    pid: child.pid,
    origin,
    port: Number(new URL(origin).port),
    lines: () => [...lines],
    waitForLine,
    kill,
    exited,
    async stop() {
      // One signal: a second one could land after the handlers are gone, as the process exits.
      kill("SIGTERM");
      const timer = setTimeout(() => kill("SIGKILL"), 15_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
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
