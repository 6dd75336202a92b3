/**
 * The processes under test: the real gateway (started as the tests start it, from a temp config,
 * port 0) and the bare Deno.serve baseline server, each a subprocess, with RSS readings.
 */
import { join } from "node:path";
import { spawnGateway } from "../../tests/support/gateway_process.ts";
import { quantile } from "./results.ts";
import type { BenchContext } from "./scenario.ts";

export interface ServerProcess {
  /** e.g. `http://127.0.0.1:43121`. */
  origin: string;
  pid: number;
  /** Its log so far. */
  log(): string;
  /** Resident set size now, in MB. */
  rssMb(): Promise<number>;
  /** Peak resident set size since start (VmHWM), in MB; NaN where the OS does not say. */
  peakRssMb(): Promise<number>;
  /**
   * The RSS split into anonymous memory (heaps, stacks) and file-backed pages (mostly the
   * executable's), in MB; NaN where the OS does not say.
   */
  rssPartsMb(): Promise<{ anon: number; file: number }>;
  /** The median of a few RSS readings once the process has been idle `settleMs`, in MB. */
  idleRssMb(settleMs?: number): Promise<number>;
  /** SIGTERM, then SIGKILL if it has not exited in time. */
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

/** A process's memory readings and its stop, around its pid. */
function serverProcess(
  server: { pid: number; origin: string; lines(): string[] },
  stop: () => Promise<unknown>,
): ServerProcess {
  let stopped: Promise<void> | undefined;
  return {
    origin: server.origin,
    pid: server.pid,
    log: () => server.lines().join("\n"),
    rssMb: () => readMemory(server.pid, "VmRSS"),
    peakRssMb: () => readMemory(server.pid, "VmHWM"),
    rssPartsMb: async () => ({
      anon: await readMemory(server.pid, "RssAnon"),
      file: await readMemory(server.pid, "RssFile"),
    }),
    idleRssMb: async (settleMs = 1000) => {
      await new Promise((resolve) => setTimeout(resolve, settleMs));
      const readings: number[] = [];
      for (let i = 0; i < 5; i++) {
        readings.push(await readMemory(server.pid, "VmRSS"));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (readings.some((mb) => !Number.isFinite(mb))) {
        throw new Error(
          `pid ${server.pid} has exited; its log ends:\n${server.lines().slice(-20)}`,
        );
      }
      return quantile(readings, 0.5);
    },
    stop: () => stopped ??= stop().then(() => {}),
  };
}

let serial = 0;

/** The gateway's environment: ours (model keys the scenarios set) without SVC_*. */
function gatewayEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of Object.keys(env)) if (name.startsWith("SVC_")) delete env[name];
  return env;
}

/**
 * Starts the real gateway (tests/support/gateway_process.ts, the start task's flags) of the
 * context's checkout with `config` merged over bench defaults (loopback, port 0, info logging as
 * shipped, no session or concurrency caps in the way); its log is kept in its scratch directory.
 */
export async function startGateway(
  context: BenchContext,
  config: Record<string, unknown>,
  options: { olderGateway?: boolean } = {},
): Promise<ServerProcess> {
  const dir = join(context.tempDir, `gateway-${++serial}`);
  await Deno.mkdir(dir, { recursive: true });
  const full = {
    host: "127.0.0.1",
    logLevel: "info",
    maxTurns: 1_000_000,
    // The bench measures the gateway's own work, so no global limit queues its turns (a gateway
    // older than these settings refuses them as unknown keys).
    ...(options.olderGateway ? {} : { maxConcurrentTurns: 1000, maxConnections: 1000 }),
    ...config,
  };
  const gateway = await spawnGateway(dir, full, gatewayEnv(), {
    root: context.repoRoot,
    denoFlags: context.gatewayFlags,
    cwd: context.repoRoot,
  }).catch((err: Error) => {
    throw new Error(`gateway did not start: ${err.message}`);
  });
  return serverProcess(gateway, async () => {
    await gateway.stop();
    await Deno.writeTextFile(join(dir, "gateway.log"), gateway.lines().join("\n"));
  });
}

/** Starts `baseline_server.ts`: bare Deno.serve doing the minimum per endpoint. */
export async function startBaselineServer(context: BenchContext): Promise<ServerProcess> {
  const script = join(context.repoRoot, "scripts/bench/baseline_server.ts");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", script],
    stdin: "null",
    stdout: "piped",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let match: RegExpExecArray | null;
  while (!(match = /listening on (\S+)/.exec(text))) {
    const next = await stdout.read();
    if (next.done) throw new Error(`baseline server exited: ${text}`);
    text += next.value;
  }
  await stdout.cancel(); // it prints nothing more
  const origin = match[1];
  return serverProcess({ pid: child.pid, origin, lines: () => [text] }, () => {
    child.kill("SIGTERM");
    return child.status;
  });
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
