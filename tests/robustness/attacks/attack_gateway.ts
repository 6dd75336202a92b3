/**
 * What the attack tests (issue 18) run against: the real gateway (tests/support/gateway_process.ts,
 * loopback, port 0) in a temporary directory of its own with `sh` fake agents written there, and
 * the raw-socket client, process-table and memory readings the attacks measure it with.
 */
import { join } from "node:path";
import { type GatewayProcess, spawnGateway } from "../../support/gateway_process.ts";

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A temporary directory for one attack, removed after `fn`. */
export async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "council-attack-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Writes an executable `sh` fake agent (it reads the prompt first) and returns its path. */
export async function writeFake(dir: string, name: string, body: string): Promise<string> {
  const path = join(dir, `${name}.sh`);
  await Deno.writeTextFile(path, `#!/bin/sh\n# attack fake ${name}\ncat >/dev/null\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** A council of `count` `command` agents all running `fake`. */
export function councilOf(fake: string, count = 1): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `fake${i}`,
    runner: "command",
    model: "attack-model",
    command: fake,
  }));
}

export interface AttackOptions {
  env?: Record<string, string>;
  fileLimit?: number;
}

/** Runs `fn` against a gateway started in `dir` with `config` (info logging), then stops it. */
export async function withGateway<T>(
  dir: string,
  config: Record<string, unknown>,
  fn: (gateway: GatewayProcess) => Promise<T>,
  options: AttackOptions = {},
): Promise<T> {
  const gateway = await spawnGateway(
    dir,
    { host: "127.0.0.1", logLevel: "info", fanOutPolicy: "never", ...config },
    options.env,
    { fileLimit: options.fileLimit },
  );
  try {
    return await fn(gateway);
  } finally {
    await gateway.stop();
  }
}

/** Processes whose command line mentions `needle` (from `ps`), not counting `ps` itself. */
export async function processesMatching(needle: string): Promise<number[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="] }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(needle) && !/\bps -eo\b/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter((pid) => Number.isInteger(pid) && pid !== Deno.pid);
}

/** A `VmRSS` (now) or `VmHWM` (peak) reading of /proc/<pid>/status in MB; NaN off Linux. */
export async function memoryMb(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1];
  return kb === undefined ? NaN : Number(kb) / 1024;
}

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

/** Replies counted by status, e.g. `28×200, 2×429`, for assertion messages. */
export function countStatuses(statuses: number[]): string {
  return [...new Set(statuses)].sort().map((s) => `${statuses.filter((x) => x === s).length}×${s}`)
    .join(", ");
}

/** POSTs a JSON body (an object, or text already serialized). */
export function post(origin: string, path: string, body: unknown, headers = {}) {
  return fetch(`${origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
