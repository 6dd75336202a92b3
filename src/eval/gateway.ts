/**
 * A run's own gateway: this program's `serve` as a child process on an ephemeral loopback port
 * with the arm's configuration (written beside the run) and the run's own ledger, until stopped.
 */
import { join } from "node:path";
import { originOfListening } from "../daemon/lifecycle.ts";
import type { SelfInvocation } from "../daemon/self.ts";
import { signalGroup } from "../agents/process/group_end.ts";
import type { ConfigObject } from "./arms.ts";
import { spawnInGroup } from "./process.ts";

export interface RunGateway {
  /** Where the host reaches it, e.g. http://127.0.0.1:40123. */
  origin: string;
  /** The run's ledger: every turn of this run and nothing else. */
  ledger: string;
  stop(): Promise<void>;
}

/** Time to start listening (a cold Deno start compiles the program first). */
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5000;

/** The arm's configuration for one run: loopback, any free port, the run's ledger. */
export function runConfig(arm: ConfigObject, ledger: string): ConfigObject {
  const config: ConfigObject = { ...arm, host: "127.0.0.1", port: 0, ledger, logJson: false };
  // The startup line (info) says which port it got.
  if (config.logLevel !== "debug") config.logLevel = "info";
  // A run's gateway stands alone: no auth on loopback, no tie to the user's own gateway.
  delete config.token;
  return config;
}

/** The environment without `SVC_*` settings, which would override the arm's file. */
export function gatewayEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("SVC_")));
}

async function waitListening(
  stdout: ReadableStream<Uint8Array>,
  log: Deno.FsFile,
): Promise<string | undefined> {
  const decoder = new TextDecoder();
  let pending = "";
  let origin: string | undefined;
  const reader = stdout.getReader();
  while (origin === undefined) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    await log.write(value);
    pending += decoder.decode(value, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) origin ??= originOfListening(line);
  }
  // The rest of its output goes on to the log.
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        await log.write(value);
      }
    } catch { /* the log was closed at stop */ }
  })();
  return origin;
}

/**
 * Starts the gateway for one run in `dir`, its output appended to `logPath`; throws with the
 * log's end when it does not listen.
 */
export async function startGateway(
  self: SelfInvocation,
  arm: ConfigObject,
  dir: string,
  env: Record<string, string>,
  logPath: string,
): Promise<RunGateway> {
  const ledger = join(dir, "ledger.jsonl");
  const configFile = join(dir, "gateway.yaml");
  // JSON is YAML: the file is the arm's configuration as data, written as is.
  await Deno.writeTextFile(configFile, JSON.stringify(runConfig(arm, ledger), null, 2));
  const log = await Deno.open(logPath, { append: true, create: true });
  const args = [...self.args, "serve", "--config", configFile];
  const child = spawnInGroup(self.command, args, gatewayEnv(env));
  void child.stderr.pipeTo(
    new WritableStream({ write: (chunk) => log.write(chunk).then(() => {}) }),
  ).catch(() => {});
  const stop = async () => {
    signalGroup(child.pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), STOP_GRACE_MS);
    try {
      await child.status;
    } finally {
      clearTimeout(timer);
      signalGroup(child.pid, "SIGKILL");
      try {
        log.close();
      } catch { /* closed */ }
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), START_TIMEOUT_MS);
  });
  const origin = await Promise.race([waitListening(child.stdout, log), timedOut]);
  clearTimeout(timer);
  if (!origin) {
    await stop();
    const text = await Deno.readTextFile(logPath).catch(() => "");
    const end = text.trim().split("\n").slice(-3).join(" / ");
    throw new Error(`the arm's gateway did not start: ${end}`);
  }
  return { origin, ledger, stop };
}
