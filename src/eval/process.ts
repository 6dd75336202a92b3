/**
 * A command of a run (setup, host, check) in its own process group, its output appended to the
 * run's log, the whole group ended at its time limit or when the eval is interrupted.
 */
import { signalGroup } from "../agents/process/group_end.ts";

export interface CommandSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Ended (the whole group) after this. */
  timeoutMs: number;
  /** Where stdout and stderr go (appended). */
  log: string;
  signal?: AbortSignal;
}

export interface CommandEnd {
  code: number;
  timedOut: boolean;
  aborted: boolean;
  /** The command could not be started. */
  spawnError?: string;
  /** The last of its output (the log keeps all of it). */
  tail: string;
}

/** After SIGTERM, how long the group gets before SIGKILL. */
const KILL_GRACE_MS = 3000;
const TAIL_CHARS = 2000;

async function drain(stream: ReadableStream<Uint8Array>, log: Deno.FsFile, tail: string[]) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    await log.write(chunk);
    tail.push(decoder.decode(chunk, { stream: true }));
    while (tail.join("").length > TAIL_CHARS * 2 && tail.length > 1) tail.shift();
  }
}

/** Starts a command in a process group of its own, with exactly `env`, output piped. */
export function spawnInGroup(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Deno.ChildProcess {
  const options = { args, env, clearEnv: true, stdin: "null", stdout: "piped", stderr: "piped" };
  return new Deno.Command(command, { ...options, cwd, detached: true } as Deno.CommandOptions)
    .spawn();
}

/** Runs the command to its end, its time limit or the signal; never throws. */
export async function runCommand(spec: CommandSpec): Promise<CommandEnd> {
  const log = await Deno.open(spec.log, { append: true, create: true });
  const tail: string[] = [];
  let child: Deno.ChildProcess;
  try {
    child = spawnInGroup(spec.command, spec.args, spec.env, spec.cwd);
  } catch (err) {
    log.close();
    const spawnError = `${spec.command}: ${(err as Error).message}`;
    return { code: 127, timedOut: false, aborted: false, spawnError, tail: "" };
  }
  let timedOut = false;
  let aborted = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const end = () => {
    signalGroup(child.pid, "SIGTERM");
    killTimer ??= setTimeout(() => signalGroup(child.pid, "SIGKILL"), KILL_GRACE_MS);
  };
  const limit = setTimeout(() => {
    timedOut = true;
    end();
  }, spec.timeoutMs);
  const onAbort = () => {
    aborted = true;
    end();
  };
  spec.signal?.addEventListener("abort", onAbort);
  if (spec.signal?.aborted) onAbort();
  try {
    const [status] = await Promise.all([
      child.status,
      drain(child.stdout, log, tail),
      drain(child.stderr, log, tail),
    ]);
    // Whatever the command left running in its group goes with it.
    signalGroup(child.pid, "SIGKILL");
    return { code: status.code, timedOut, aborted, tail: tail.join("").slice(-TAIL_CHARS) };
  } finally {
    clearTimeout(limit);
    clearTimeout(killTimer);
    spec.signal?.removeEventListener("abort", onAbort);
    log.close();
  }
}
