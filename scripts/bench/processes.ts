/**
 * The processes under test: the real gateway (`deno run` with the start task's flags, a temp
 * config, port 0) and the bare Deno.serve baseline server, each a subprocess whose log goes to a
 * file (a full pipe would block the server's synchronous log writes), with RSS readings.
 */
import { join } from "node:path";
import { stringify } from "yaml";
import type { BenchContext } from "./scenario.ts";

export interface ServerProcess {
  /** e.g. `http://127.0.0.1:43121`. */
  origin: string;
  pid: number;
  logPath: string;
  /** Resident set size now, in MB. */
  rssMb(): Promise<number>;
  /** Peak resident set size since start (VmHWM), in MB; NaN where the OS does not say. */
  peakRssMb(): Promise<number>;
  /**
   * The RSS split into anonymous memory (heaps, stacks) and file-backed pages (mostly the
   * executable's), in MB; NaN where the OS does not say.
   */
  rssPartsMb(): Promise<{ anon: number; file: number }>;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  stop(): Promise<void>;
}

const KB = 1024;

/** A `VmRSS` / `VmHWM` line of /proc/<pid>/status in MB (Linux), or `ps` (elsewhere). */
type MemoryField = "VmRSS" | "VmHWM" | "RssAnon" | "RssFile";

async function readMemory(pid: number, field: MemoryField): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1];
    return kb === undefined ? NaN : Number(kb) / KB;
  } catch {
    if (field !== "VmRSS") return NaN;
    const out = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output()
      .catch(() => undefined);
    const text = out ? new TextDecoder().decode(out.stdout).trim() : "";
    // Nothing printed: no such process (it has exited).
    return text ? Number(text) / KB : NaN;
  }
}

/** The flags of deno.json's `start` task (`deno run --allow-… main.ts serve`). */
export async function startTaskArgs(repoRoot: string): Promise<string[]> {
  const deno = JSON.parse(await Deno.readTextFile(join(repoRoot, "deno.json")));
  const words = String(deno.tasks?.start ?? "").split(/\s+/).filter(Boolean);
  if (words[0] !== "deno" || words[1] !== "run") {
    throw new Error(`deno.json tasks.start is not a "deno run" command: ${deno.tasks?.start}`);
  }
  return words.slice(1);
}

export async function waitForLine(
  path: string,
  pattern: RegExp,
  child: Deno.ChildProcess,
  timeoutMs: number,
): Promise<RegExpExecArray> {
  let exited = false;
  child.status.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await Deno.readTextFile(path).catch(() => "");
    const match = pattern.exec(text);
    if (match) return match;
    if (exited || Date.now() > deadline) {
      throw new Error(
        `${exited ? "exited" : "timed out"} before printing ${pattern}; log:\n${text.slice(-2000)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `argv` with stdout and stderr sent to `logPath` (via `sh -c exec`, so pid is argv's). */
export function spawnLogged(
  argv: string[],
  logPath: string,
  cwd: string,
  env?: Record<string, string>,
) {
  return new Deno.Command("sh", {
    args: ["-c", 'log=$1; shift; exec "$@" >"$log" 2>&1', "sh", logPath, ...argv],
    cwd,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

export function serverProcess(
  child: Deno.ChildProcess,
  origin: string,
  logPath: string,
): ServerProcess {
  let stopped: Promise<void> | undefined;
  return {
    origin,
    pid: child.pid,
    logPath,
    rssMb: () => readMemory(child.pid, "VmRSS"),
    peakRssMb: () => readMemory(child.pid, "VmHWM"),
    rssPartsMb: async () => ({
      anon: await readMemory(child.pid, "RssAnon"),
      file: await readMemory(child.pid, "RssFile"),
    }),
    stop: () =>
      stopped ??= (async () => {
        try {
          child.kill("SIGTERM");
        } catch { /* already gone */ }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* already gone */ }
        }, 10_000);
        await child.status;
        clearTimeout(timer);
      })(),
  };
}

let serial = 0;

/** The gateway's environment: ours without SVC_* (the temp config decides everything). */
function gatewayEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of Object.keys(env)) if (name.startsWith("SVC_")) delete env[name];
  return env;
}

/**
 * Starts the real gateway with `config` (merged over bench defaults: loopback, port 0, info
 * logging as shipped, no session or concurrency caps in the way) and waits for its startup line.
 */
export async function startGateway(
  context: BenchContext,
  config: Record<string, unknown>,
  options: { olderGateway?: boolean } = {},
): Promise<ServerProcess> {
  const id = ++serial;
  const configPath = join(context.tempDir, `gateway-${id}.yaml`);
  const logPath = join(context.tempDir, `gateway-${id}.log`);
  await Deno.writeTextFile(
    configPath,
    stringify({
      host: "127.0.0.1",
      port: 0,
      logLevel: "info",
      maxTurns: 1_000_000,
      // The bench measures the gateway's own work, so no global limit queues its turns (a gateway
      // older than these settings refuses them as unknown keys).
      ...(options.olderGateway ? {} : { maxConcurrentTurns: 1000, maxConnections: 1000 }),
      ...config,
    }),
  );
  const [run, ...args] = await startTaskArgs(context.repoRoot);
  const child = spawnLogged(
    [Deno.execPath(), run, ...context.gatewayFlags, ...args, "--config", configPath],
    logPath,
    context.repoRoot,
    gatewayEnv(),
  );
  try {
    const match = await waitForLine(logPath, /listening on (http:\/\/[^\s]+)/, child, 60_000);
    return serverProcess(child, match[1], logPath);
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    throw new Error(`gateway did not start: ${(err as Error).message}`);
  }
}

/** Starts `baseline_server.ts`: bare Deno.serve doing the minimum per endpoint. */
export async function startBaselineServer(context: BenchContext): Promise<ServerProcess> {
  const id = ++serial;
  const logPath = join(context.tempDir, `baseline-${id}.log`);
  const script = join(context.repoRoot, "scripts/bench/baseline_server.ts");
  const child = spawnLogged(
    [Deno.execPath(), "run", "--allow-net", script],
    logPath,
    context.repoRoot,
  );
  const match = await waitForLine(logPath, /listening on (http:\/\/[^\s]+)/, child, 60_000);
  return serverProcess(child, match[1], logPath);
}

/** A command agent entry running one of the bench fakes with `env` knobs. */
export function fakeAgent(
  context: BenchContext,
  name: string,
  script: "child.sh" | "stream.sh" | "claude-stream.sh",
  env: Record<string, string> = {},
): Record<string, unknown> {
  return {
    name,
    runner: script === "claude-stream.sh" ? "claude" : "command",
    model: "bench",
    command: fakePath(context, script),
    env,
  };
}

export function fakePath(context: BenchContext, script: string): string {
  return join(context.repoRoot, "scripts/bench/fakes", script);
}

/** The config of a council of three fakes that always fans out. */
export function councilConfig(
  agents: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { fanOutPolicy: "always", councilSize: agents.length, defaultAgents: agents, ...extra };
}
