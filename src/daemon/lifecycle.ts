/**
 * Starting the gateway in the background (a new process group, stdin closed, stdout and stderr
 * appended to the log file) and stopping it (SIGTERM, the gateway's graceful shutdown, SIGKILL
 * only when that takes too long).
 */
import { clientOrigin } from "../cli/connect.ts";
import { VERSION } from "../base/version.ts";
import type { DaemonPaths } from "./paths.ts";
import { commandLine, isRunning, waitForExit } from "./process_check.ts";
import { type SelfInvocation, selfInvocation } from "./self.ts";
import {
  type DaemonState,
  readDaemonState,
  readPid,
  removeDaemonState,
  writeDaemonState,
} from "./state.ts";

/** A log larger than this is moved to `gateway.log.1` when the gateway starts. */
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
/** How long a start may take before it counts as failed. */
const START_TIMEOUT_MS = 30_000;
/** Longer than the gateway's own shutdown (grace, then cancelled turns winding down). */
const STOP_TIMEOUT_MS = 20_000;

type StartResult =
  | { kind: "started"; state: DaemonState }
  | { kind: "failed"; reason: string; log: string };

interface StartOptions {
  paths: DaemonPaths;
  /** `serve`'s arguments (`--config`, `--host`, `--port` as given). */
  serveArgs: string[];
  configPath: string | null;
  cwd: string;
  invocation?: SelfInvocation;
  timeoutMs?: number;
}

function rotateLog(path: string): void {
  try {
    if (Deno.statSync(path).size > LOG_ROTATE_BYTES) Deno.renameSync(path, `${path}.1`);
  } catch { /* no log yet */ }
}

function sizeOf(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** The log written since `offset`. */
export function logSince(path: string, offset: number): string {
  try {
    const file = Deno.openSync(path);
    try {
      file.seekSync(offset, Deno.SeekMode.Start);
      const bytes = new Uint8Array(Math.max(0, sizeOf(path) - offset));
      let read = 0;
      while (read < bytes.length) {
        const n = file.readSync(bytes.subarray(read));
        if (n === null) break;
        read += n;
      }
      return new TextDecoder().decode(bytes.subarray(0, read));
    } finally {
      file.close();
    }
  } catch {
    return "";
  }
}

/** The origin a local client uses, from the startup line's `listening on http://HOST:PORT`. */
export function originOfListening(line: string): string | undefined {
  const match = /listening on (http:\/\/\S+)/.exec(line);
  const url = match ? URL.parse(match[1]) : null;
  if (!url) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return clientOrigin({ host, port: Number(url.port || 80) });
}

/** Starts `serve` in the background and waits until it listens (or fails). */
export async function startDaemon(options: StartOptions): Promise<StartResult> {
  const { paths } = options;
  if (Deno.build.os === "windows") {
    return {
      kind: "failed",
      reason: "background mode is not available on Windows: run `serve` under a service manager",
      log: "",
    };
  }
  Deno.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  rotateLog(paths.log);
  const offset = sizeOf(paths.log);
  const self = options.invocation ?? selfInvocation();
  // sh appends both streams to the log and then becomes the gateway (same pid).
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'log=$1; shift; exec "$@" >>"$log" 2>&1 </dev/null',
      "sh",
      paths.log,
      self.command,
      ...self.args,
      "serve",
      ...options.serveArgs,
    ],
    cwd: options.cwd,
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  let exited: Deno.CommandStatus | undefined;
  child.status.then((status) => (exited = status));
  const until = Date.now() + (options.timeoutMs ?? START_TIMEOUT_MS);
  try {
    for (;;) {
      const log = logSince(paths.log, offset);
      const origin = originOfListening(log);
      if (origin) {
        const state: DaemonState = {
          pid: child.pid,
          origin,
          configPath: options.configPath,
          startedAt: new Date().toISOString(),
          version: VERSION,
        };
        writeDaemonState(paths, state);
        return { kind: "started", state };
      }
      if (exited) {
        return { kind: "failed", reason: `the gateway exited (code ${exited.code})`, log };
      }
      if (Date.now() > until) {
        try {
          Deno.kill(child.pid, "SIGTERM");
        } catch { /* gone */ }
        return { kind: "failed", reason: "the gateway did not start listening in time", log };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    child.unref();
  }
}

/** The running background gateway's state, or null (stale files are removed). */
export function runningDaemon(paths: DaemonPaths): DaemonState | null {
  const state = readDaemonState(paths);
  const pid = readPid(paths);
  if (state && pid === state.pid && isRunning(pid) && isOurs(pid)) return state;
  if (state || pid !== null) removeDaemonState(paths);
  return null;
}

/** A pid reused by another program is not ours (checked where the system shows command lines). */
function isOurs(pid: number): boolean {
  const argv = commandLine(pid);
  return argv === null || argv.includes("serve");
}

type StopResult =
  | { kind: "stopped"; pid: number; forced: boolean }
  | { kind: "not-running" };

/** Stops the background gateway: SIGTERM, then SIGKILL after `timeoutMs`. */
export async function stopDaemon(
  paths: DaemonPaths,
  timeoutMs = STOP_TIMEOUT_MS,
): Promise<StopResult> {
  const state = runningDaemon(paths);
  const pid = state?.pid ?? null;
  if (pid === null) return { kind: "not-running" };
  try {
    Deno.kill(pid, "SIGTERM");
  } catch { /* ended meanwhile */ }
  let forced = false;
  if (!(await waitForExit(pid, timeoutMs))) {
    forced = true;
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* ended meanwhile */ }
    await waitForExit(pid, 5000);
  }
  removeDaemonState(paths);
  return { kind: "stopped", pid, forced };
}
