/**
 * The one place that spawns a child CLI: prompt to stdin, stdout handed on line by line with
 * bounded buffering, a bounded stderr tail, and the child's whole process group ended on
 * time-out, abort, and after it exits.
 */
import { isAbsolute, join } from "node:path";
import type { Clock } from "../clock.ts";
import {
  HELPER_EXEC_FAILED_CODE,
  helperDirectory,
  helperExecErrno,
  installSpawnHelper,
} from "./spawn_helper.ts";

/**
 * How a child gets its own process group (pgid = pid), so its whole tree can be signalled.
 * `helper`: run `<spawn helper> <executable> <args…>` (spawn_helper.ts): a static program that
 * calls setsid(2) and execs the executable in place; Deno spawns it with posix_spawn, and it adds
 * nothing measurable to the child's start. `fallback` is used when the helper file has gone.
 * `setsid`: the same with setsid(1), whose dynamic loading adds about 0.8 ms to each child's
 * start; setsid(1) is not a group leader there, so it calls setsid(2) and execs in place too.
 * `detached`: Deno's `detached: true`, whose pre-exec hook makes Deno fork the whole gateway
 * (1–4 ms per child on the gateway's thread, growing with its memory): the last resort, where
 * neither is available (macOS, Windows).
 */
export type GroupSpawn =
  | { via: "helper"; helper: string; fallback: GroupSpawn }
  | { via: "setsid"; setsid: string }
  | { via: "detached" };

/** Where setsid(1) is looked for when PATH does not have it (or cannot be read). */
const SETSID_PLACES = ["/usr/bin/setsid", "/bin/setsid"];

/** The group spawn for this machine, decided once at start-up: `setsid` on Linux when present. */
export function chooseGroupSpawn(
  { os = Deno.build.os, path = readPath(), places = SETSID_PLACES }: {
    os?: typeof Deno.build.os;
    /** The gateway's PATH. */
    path?: string;
    /** Where to look when PATH has no setsid. */
    places?: readonly string[];
  } = {},
): GroupSpawn {
  if (os !== "linux") return { via: "detached" };
  const dirs = (path ?? "").split(":").filter((dir) => dir.startsWith("/"));
  const setsid = [...dirs.map((dir) => join(dir, "setsid")), ...places].find(isExecutableFile);
  return setsid ? { via: "setsid", setsid } : { via: "detached" };
}

/** The machine's group spawn, and why the spawn helper is not used when it is not. */
export interface MachineGroupSpawn {
  spawn: GroupSpawn;
  helperProblem?: string;
}

let machineChoice: Promise<MachineGroupSpawn> | undefined;

/**
 * The group spawn for this machine, decided once per process: the spawn helper where it can be
 * installed (Linux x86_64; in the user's cache directory, else a temporary one removed at exit),
 * else `chooseGroupSpawn()`.
 */
export function machineGroupSpawn(): Promise<MachineGroupSpawn> {
  return machineChoice ??= (async (): Promise<MachineGroupSpawn> => {
    const fallback = chooseGroupSpawn();
    if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
      return {
        spawn: fallback,
        helperProblem: `not available on ${Deno.build.os} ${Deno.build.arch}`,
      };
    }
    let directory = helperDirectory(readEnv);
    if (directory === undefined) {
      directory = await Deno.makeTempDir({ prefix: "council-gateway-" }).catch(() => undefined);
      if (directory === undefined) {
        return { spawn: fallback, helperProblem: "no cache or temporary directory to keep it in" };
      }
      const dir = directory;
      globalThis.addEventListener("unload", () => {
        try {
          Deno.removeSync(dir, { recursive: true });
        } catch { /* already gone */ }
      });
    }
    const installed = await installSpawnHelper({ directory });
    if ("error" in installed) return { spawn: fallback, helperProblem: installed.error };
    return { spawn: { via: "helper", helper: installed.path, fallback } };
  })();
}

/** One line on how children get their process group, for logs and `doctor`. */
export function describeGroupSpawn({ spawn, helperProblem }: MachineGroupSpawn): string {
  const why = helperProblem ? ` (spawn helper not used: ${helperProblem})` : "";
  switch (spawn.via) {
    case "helper":
      return `the spawn helper ${spawn.helper}`;
    case "setsid":
      return `setsid(1) at ${spawn.setsid}${why}`;
    case "detached":
      return `Deno's detached spawn${why}`;
  }
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function readPath(): string | undefined {
  return readEnv("PATH");
}

export interface SpawnRequest {
  command: string;
  args: string[];
  cwd: string;
  /** The complete environment (nothing is inherited). */
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  stdin: string;
  /** `lines`: `onStdout` gets each line without its newline; `text`: decoded chunks. */
  stdout: "lines" | "text";
  onStdout(piece: string): void;
  onStderrLine?(line: string): void;
  onSpawn?(pid: number): void;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Drives the time-out (tests pass a FakeClock). */
  clock: Clock;
  /** Real-time wait between SIGTERM and SIGKILL of the process group. */
  killGraceMs: number;
  /** Longer stdout lines are skipped whole, never buffered beyond this. */
  maxLineBytes: number;
  /** How the child gets its own process group (see `chooseGroupSpawn`). */
  groupSpawn: GroupSpawn;
}

export interface ChildExit {
  spawned: boolean;
  /**
   * Why the child could not start (executable or cwd missing, not executable, …); also set when
   * setsid(1) started but could not exec the executable (`spawned` is then true).
   */
  spawnError?: string;
  pid?: number;
  exitCode: number | null;
  signal: Deno.Signal | null;
  timedOut: boolean;
  aborted: boolean;
  /** The last stderr lines (each cut to a bounded length). */
  stderrTail: string[];
  /** Stdout lines skipped for being longer than `maxLineBytes`. */
  droppedLines: number;
}

const STDERR_TAIL_LINES = 20;
const STDERR_LINE_BYTES = 2048;
/** How often a terminated group is probed for remaining members. */
const PROBE_MS = 25;
/** Size of the one read buffer each pipe gets. */
const READ_BUFFER_BYTES = 16 * 1024;

/**
 * Splits a byte stream into lines, holding at most `maxLineBytes` of the current line: a
 * longer line is dropped whole (`drop`) or cut (`truncate`) without being buffered.
 */
export class LineSplitter {
  #parts: Uint8Array[] = [];
  #size = 0;
  #overflowed = false;
  #decoder = new TextDecoder();
  /** Lines that overflowed (dropped or cut). */
  overflowed = 0;

  constructor(readonly maxLineBytes: number, readonly overflow: "drop" | "truncate") {}

  /** Bytes of the current, unfinished line held in memory (never above `maxLineBytes`). */
  get bufferedBytes(): number {
    return this.#size;
  }

  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      this.#append(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return lines;
      const line = this.#take();
      if (line !== undefined) lines.push(line);
      start = newline + 1;
    }
  }

  /** The last line when the stream ended without a newline. */
  end(): string[] {
    if (this.#size === 0 && !this.#overflowed) return [];
    const line = this.#take();
    return line === undefined ? [] : [line];
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0 || (this.#overflowed && this.overflow === "drop")) return;
    const room = this.maxLineBytes - this.#size;
    if (bytes.length > room) {
      if (!this.#overflowed) this.overflowed++;
      this.#overflowed = true;
      if (this.overflow === "drop") {
        this.#parts = [];
        this.#size = 0;
        return;
      }
      bytes = bytes.subarray(0, room);
    }
    if (bytes.length === 0) return;
    this.#parts.push(bytes.slice());
    this.#size += bytes.length;
  }

  #take(): string | undefined {
    const dropped = this.#overflowed && this.overflow === "drop";
    const bytes = new Uint8Array(this.#size);
    let offset = 0;
    for (const part of this.#parts) {
      bytes.set(part, offset);
      offset += part.length;
    }
    this.#parts = [];
    this.#size = 0;
    this.#overflowed = false;
    if (dropped) return undefined;
    const text = this.#decoder.decode(bytes);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  }
}

/** Sends a signal to a whole process group; false when the group no longer exists. */
function signalGroup(pid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM to the group, then SIGKILL once `graceMs` has passed with members still alive.
 * (Members that died but were not reaped by init still count: the grace is then waited out.)
 */
async function terminateGroup(
  child: Deno.ChildProcess,
  graceMs: number,
  exited: () => boolean,
): Promise<void> {
  const pid = child.pid;
  if (!signalGroup(pid, "SIGTERM")) {
    // No group to signal: gone, a platform without process groups, or the helper or setsid(1)
    // not yet past setsid(2) (the first moments after spawn). End the child itself, then the
    // group it may have formed meanwhile (its pid cannot be reused before we reap it).
    if (!exited()) {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      signalGroup(pid, "SIGKILL");
    }
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(Math.max(1, Math.min(PROBE_MS, deadline - Date.now())));
    // SIGCONT harms nothing and fails once no member is left.
    if (!signalGroup(pid, "SIGCONT")) return;
  }
  signalGroup(pid, "SIGKILL");
}

/** Resolves true when `work` settles within `ms` (real time), false otherwise. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true, () => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

interface Pump {
  done: Promise<void>;
  cancel(): Promise<void>;
}

/**
 * Reads a stream to its end, handing each chunk on; the chunk's bytes are reused for the next
 * read, so `onChunk` must copy what it keeps. One buffer per pipe: the default reader allocates
 * a fresh 64 KiB buffer per read, freed only when V8 gets round to it, which grew the gateway's
 * RSS by tens of MB over a thousand turns.
 */
function pump(stream: ReadableStream<Uint8Array>, onChunk: (bytes: Uint8Array) => void): Pump {
  const reader = stream.getReader({ mode: "byob" });
  const done = (async () => {
    let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
    try {
      for (;;) {
        const { value, done } = await reader.read(new Uint8Array(buffer));
        if (done || !value) return;
        buffer = value.buffer as ArrayBuffer;
        try {
          onChunk(value);
        } catch {
          // A consumer's bug must not stop the reading: a full pipe would stall the child.
        }
      }
    } catch {
      // Cancelled, or the pipe broke: what was read is kept.
    }
  })();
  return { done, cancel: () => reader.cancel().catch(() => {}) };
}

/** Writes the prompt and closes stdin; a child that exits without reading is not an error. */
function feed(stream: WritableStream<Uint8Array>, text: string): Pump {
  const writer = stream.getWriter();
  const done = (async () => {
    try {
      if (text) await writer.write(new TextEncoder().encode(text));
      await writer.close();
    } catch {
      await writer.abort().catch(() => {});
    }
  })();
  return { done, cancel: () => writer.abort().catch(() => {}) };
}

function describeSpawnError(err: unknown, request: SpawnRequest): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof Deno.errors.NotFound) {
    if (!isDirectory(request.cwd)) return `working directory not found: ${request.cwd}`;
    if (request.command.includes("/") && exists(request.command)) {
      return `cannot start ${request.command}: its interpreter was not found`;
    }
    return `executable not found: ${request.command}`;
  }
  if (err instanceof Deno.errors.PermissionDenied) {
    return `cannot execute ${request.command}: permission denied`;
  }
  if (err instanceof Deno.errors.NotCapable) {
    return `not allowed to run ${request.command} (the gateway needs --allow-run)`;
  }
  return `cannot start ${request.command}: ${message}`;
}

/** Whether `path` is a file with an execute bit (what setsid(1) can exec). */
function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && info.mode !== null && (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The executable as Deno would find it: a path with a slash is taken relative to `cwd`, a bare
 * name is searched in the child's PATH (the gateway's when the child has none). Undefined when
 * no executable file is found: the caller then lets Deno spawn it, for Deno's own error.
 */
export function resolveExecutable(
  command: string,
  cwd: string,
  path: string | undefined,
): string | undefined {
  if (command.includes("/")) {
    const file = isAbsolute(command) ? command : join(cwd, command);
    return isExecutableFile(file) ? file : undefined;
  }
  for (const dir of (path ?? "").split(":")) {
    if (!dir) continue;
    const file = join(isAbsolute(dir) ? dir : join(cwd, dir), command);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

interface SpawnPlan {
  program: string;
  args: string[];
  detached: boolean;
  /** The executable behind the helper or setsid(1), whose exec failure they report. */
  wrapped?: { executable: string; by: "helper" | "setsid" };
}

/** What to spawn: the helper or setsid(1) in front of the resolved executable, or detached. */
function spawnPlan(request: SpawnRequest, groupSpawn = request.groupSpawn): SpawnPlan {
  if (groupSpawn.via !== "detached") {
    const executable = resolveExecutable(
      request.command,
      request.cwd,
      request.env.PATH ?? readPath(),
    );
    if (executable) {
      return {
        program: groupSpawn.via === "helper" ? groupSpawn.helper : groupSpawn.setsid,
        args: [executable, ...request.args],
        detached: false,
        wrapped: { executable, by: groupSpawn.via },
      };
    }
  }
  // Own process group (pgid = pid) through Deno; also the way to Deno's own spawn errors.
  return { program: request.command, args: request.args, detached: true };
}

/** What the helper's errno means, in the words Deno's spawn errors use. */
const EXEC_ERRNO_TEXT: Record<number, string> = {
  1: "operation not permitted",
  7: "argument list too long",
  8: "exec format error",
  13: "permission denied",
  26: "text file busy",
  40: "too many levels of symbolic links",
};

/**
 * The wrapper's own failure to exec the executable (the helper's or setsid(1)'s, exit 126/127
 * with its message as the only stderr line), as the spawn error Deno would have given;
 * undefined for any other exit.
 */
function wrapperExecError(
  request: SpawnRequest,
  wrapped: NonNullable<SpawnPlan["wrapped"]>,
  exitCode: number,
  stderr: string[],
): string | undefined {
  if (stderr.length !== 1) return undefined;
  if (wrapped.by === "helper") {
    const errno = exitCode === HELPER_EXEC_FAILED_CODE
      ? helperExecErrno(stderr[0], wrapped.executable)
      : undefined;
    if (errno === undefined) return undefined;
    // The file exists and is executable (checked before spawning): a missing file is its #! line's.
    if (errno === 2) return `cannot start ${request.command}: its interpreter was not found`;
    const text = EXEC_ERRNO_TEXT[errno] ?? `execve failed (errno ${errno})`;
    return `cannot execute ${request.command}: ${text}`;
  }
  if (exitCode !== 126 && exitCode !== 127) return undefined;
  const prefix = `setsid: failed to execute ${wrapped.executable}: `;
  if (!stderr[0].startsWith(prefix)) return undefined;
  if (exitCode === 127) return `cannot start ${request.command}: its interpreter was not found`;
  return `cannot execute ${request.command}: ${stderr[0].slice(prefix.length).toLowerCase()}`;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function spawnProcess(plan: SpawnPlan, request: SpawnRequest): Deno.ChildProcess {
  return new Deno.Command(plan.program, {
    args: plan.args,
    cwd: request.cwd,
    env: request.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    detached: plan.detached,
  }).spawn();
}

/** Runs one child to its end. Never throws. */
export async function runChild(request: SpawnRequest): Promise<ChildExit> {
  const exit: ChildExit = {
    spawned: false,
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    stderrTail: [],
    droppedLines: 0,
  };
  if (request.signal?.aborted) {
    exit.aborted = true;
    return exit;
  }

  // Own process group (pgid = pid), so the whole tree can be signalled at once.
  let plan = spawnPlan(request);
  let child: Deno.ChildProcess;
  try {
    try {
      child = spawnProcess(plan, request);
    } catch (err) {
      // The helper file removed under a running gateway (a cache clean-up): go without it.
      const groupSpawn = request.groupSpawn;
      if (groupSpawn.via !== "helper" || !(err instanceof Deno.errors.NotFound)) throw err;
      if (exists(groupSpawn.helper)) throw err;
      plan = spawnPlan(request, groupSpawn.fallback);
      child = spawnProcess(plan, request);
    }
  } catch (err) {
    exit.spawnError = describeSpawnError(err, request);
    return exit;
  }
  exit.spawned = true;
  exit.pid = child.pid;

  let ending: Promise<void> | undefined;
  let exited = false;
  const endGroup = () => (ending ??= terminateGroup(child, request.killGraceMs, () => exited));
  const timer = request.clock.setTimeout(() => {
    exit.timedOut = true;
    endGroup();
  }, request.timeoutMs);
  const onAbort = () => {
    exit.aborted = true;
    endGroup();
  };
  request.signal?.addEventListener("abort", onAbort, { once: true });
  // Only now: a consumer may abort from within it.
  request.onSpawn?.(child.pid);

  const stdoutLines = new LineSplitter(request.maxLineBytes, "drop");
  const stdoutText = new TextDecoder();
  const stderrLines = new LineSplitter(STDERR_LINE_BYTES, "truncate");
  const keepStderr = (line: string) => {
    request.onStderrLine?.(line);
    if (!line.trim()) return;
    exit.stderrTail.push(line);
    if (exit.stderrTail.length > STDERR_TAIL_LINES) exit.stderrTail.shift();
  };

  const stdin = feed(child.stdin, request.stdin);
  const stdout = pump(child.stdout, (bytes) => {
    if (request.stdout === "text") {
      const text = stdoutText.decode(bytes, { stream: true });
      if (text) request.onStdout(text);
    } else {
      for (const line of stdoutLines.push(bytes)) request.onStdout(line);
    }
  });
  const stderr = pump(child.stderr, (bytes) => stderrLines.push(bytes).forEach(keepStderr));

  const status = await child.status;
  exited = true;
  request.clock.clearTimeout(timer);
  request.signal?.removeEventListener("abort", onAbort);
  // Grandchildren left in the group are ended too; they may hold the pipes open.
  await endGroup();
  const pipes = Promise.all([stdin.done, stdout.done, stderr.done]);
  if (!await settlesWithin(pipes, request.killGraceMs)) {
    // Something outside the group still holds a pipe: stop reading, keep what came.
    await Promise.all([stdin.cancel(), stdout.cancel(), stderr.cancel()]);
    await pipes;
  }
  if (request.stdout === "text") {
    const rest = stdoutText.decode();
    if (rest) request.onStdout(rest);
  } else {
    stdoutLines.end().forEach((line) => request.onStdout(line));
  }
  stderrLines.end().forEach(keepStderr);

  exit.exitCode = status.code;
  exit.signal = status.signal;
  if (plan.wrapped) {
    exit.spawnError = wrapperExecError(request, plan.wrapped, status.code, exit.stderrTail);
  }
  exit.droppedLines = stdoutLines.overflowed;
  return exit;
}
