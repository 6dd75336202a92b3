/**
 * What the attacks run against: the real gateway (`deno run` with the start task's flags, a
 * temporary config, loopback, port 0), optionally under a file limit, with fake agents written
 * into the run's temporary directory; and small client helpers (raw connections, `ps`).
 */
import { join } from "node:path";
import { stringify } from "yaml";
import {
  type ServerProcess,
  serverProcess,
  spawnLogged,
  startTaskArgs,
  waitForLine,
} from "../bench/processes.ts";

export interface AttackContext {
  quick: boolean;
  /** The run's temporary directory (configs, logs, fakes). */
  dir: string;
  repoRoot: string;
}

export interface Gateway extends ServerProcess {
  port: number;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number>;
  log(): Promise<string>;
  kill(signal: Deno.Signal): void;
}

let serial = 0;

/** The gateway's environment: ours without SVC_* (the temp config decides everything). */
function gatewayEnv(extra: Record<string, string>): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of Object.keys(env)) if (name.startsWith("SVC_")) delete env[name];
  return { ...env, ...extra };
}

/** Spawns `main.ts serve` with `config`; with `fileLimit`, under `ulimit -n`. */
export async function spawnGateway(
  context: AttackContext,
  config: Record<string, unknown>,
  options: { fileLimit?: number; env?: Record<string, string>; waitFor?: RegExp } = {},
): Promise<{ child: Deno.ChildProcess; logPath: string }> {
  const id = ++serial;
  const configPath = join(context.dir, `gateway-${id}.yaml`);
  const logPath = join(context.dir, `gateway-${id}.log`);
  await Deno.writeTextFile(
    configPath,
    stringify({ host: "127.0.0.1", port: 0, logLevel: "info", ...config }),
  );
  const [run, ...args] = await startTaskArgs(context.repoRoot);
  const argv = [Deno.execPath(), run, ...args, "--config", configPath];
  const limited = options.fileLimit === undefined
    ? argv
    : ["sh", "-c", `ulimit -n ${options.fileLimit} && exec "$@"`, "sh", ...argv];
  const child = spawnLogged(limited, logPath, context.repoRoot, gatewayEnv(options.env ?? {}));
  return { child, logPath };
}

/** Starts a gateway and waits until it listens. */
export async function startGateway(
  context: AttackContext,
  config: Record<string, unknown>,
  options: { fileLimit?: number; env?: Record<string, string> } = {},
): Promise<Gateway> {
  const { child, logPath } = await spawnGateway(context, config, options);
  const exited = child.status.then((s) => s.code);
  try {
    const match = await waitForLine(logPath, /listening on (http:\/\/[^\s]+)/, child, 60_000);
    const server = serverProcess(child, match[1], logPath);
    return {
      ...server,
      port: Number(new URL(match[1]).port),
      exited,
      log: () => Deno.readTextFile(logPath).catch(() => ""),
      kill: (signal) => {
        try {
          child.kill(signal);
        } catch { /* gone */ }
      },
    };
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await exited;
    throw err;
  }
}

/** Writes an executable `sh` fake agent (it reads the prompt first) and returns its path. */
export async function writeFake(context: AttackContext, name: string, body: string) {
  const path = join(context.dir, `${name}.sh`);
  await Deno.writeTextFile(path, `#!/bin/sh\n# attack fake ${name}\ncat >/dev/null\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** A council of `count` `command` agents all running `fake`. */
export function councilOf(fake: string, count = 3): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `fake${i}`,
    runner: "command",
    model: "attack-model",
    command: fake,
  }));
}

/** Processes whose command line mentions `needle` (from `ps`), not counting `ps` itself. */
export async function processesMatching(needle: string): Promise<number[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="] }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(needle) && !/\bps -eo\b/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter((pid) => Number.isInteger(pid) && pid !== Deno.pid);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw TCP client on loopback; `closed` settles when the server ends the connection. */
export class Client {
  received = "";
  closedAt: number | undefined;
  readonly closed: Promise<void>;
  readonly #conn: Deno.Conn;

  private constructor(conn: Deno.Conn) {
    this.#conn = conn;
    this.closed = this.#read();
  }

  static async open(port: number): Promise<Client> {
    return new Client(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  write(text: string): Promise<number> {
    return this.#conn.write(new TextEncoder().encode(text)).catch(() => 0);
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* closed */ }
  }

  async #read(): Promise<void> {
    const buffer = new Uint8Array(4096);
    try {
      for (;;) {
        const n = await this.#conn.read(buffer);
        if (n === null) break;
        this.received += new TextDecoder().decode(buffer.subarray(0, n));
      }
    } catch { /* reset */ }
    this.closedAt = performance.now();
  }
}

/** The status line's code of a raw response, or "-" when none arrived. */
export function statusOf(received: string): string {
  return /^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1] ?? "-";
}
