/**
 * The one place that starts a child process: in its own process group (group_spawn.ts), stdin
 * written once and closed, stdout handed on line by line with bounded buffering, a bounded stderr
 * tail, and the whole group ended (group_end.ts) on request and after the child exits.
 */
import { LineSplitter } from "../../base/line_splitter.ts";
import {
  type ChildCommand,
  describeSpawnError,
  type GroupSpawn,
  setsidExecError,
  spawnPlan,
} from "./group_spawn.ts";
import { endGroup } from "./group_end.ts";

/** Told of each process group a child leads, and when it is over (a gateway keeps a record). */
export interface GroupRegistry {
  add(pgid: number): void;
  remove(pgid: number): void;
}

interface ChildSpec extends ChildCommand {
  /** `lines`: stdout pieces are lines without their newline; `text`: decoded chunks. */
  stdout: "lines" | "text";
  /** Longer stdout lines are skipped whole, never buffered beyond this. */
  maxLineBytes: number;
  /** Real-time wait between SIGTERM and SIGKILL of the process group. */
  killGraceMs: number;
  /** How the child gets its own process group (see `chooseGroupSpawn`). */
  groupSpawn: GroupSpawn;
  groups?: GroupRegistry;
  onStderrLine?(line: string): void;
  /** Written to stdin at once, ahead of what `deliver` writes later. */
  stdinPrimer?: string;
}

/** How a child ended. */
export interface ChildEnd {
  exitCode: number | null;
  signal: Deno.Signal | null;
  /** setsid(1) started but could not exec the executable (said as Deno would have said it). */
  spawnError?: string;
  /** The last stderr lines (each cut to a bounded length). */
  stderrTail: string[];
  /** Stdout lines skipped for being longer than `maxLineBytes`. */
  droppedLines: number;
}

/** A child that has been spawned and waits for its stdin. */
export interface RunningChild {
  readonly pid: number;
  /** Starts reading stdout into `onStdout`; until then a child that writes waits on its pipe. */
  read(onStdout: (piece: string) => void): void;
  /** Writes `text` to stdin and closes it (the first call only). */
  deliver(text: string): void;
  /** Ends the child's whole group: SIGTERM, then SIGKILL after the grace. Idempotent. */
  end(): Promise<void>;
  /** Settles when the child's own process has exited. */
  readonly exited: Promise<void>;
  /** Settles once the child has exited, its group is over and its pipes are drained. */
  readonly ended: Promise<ChildEnd>;
}

const STDERR_TAIL_LINES = 20;
const STDERR_LINE_BYTES = 2048;
/** Size of the one read buffer each pipe gets. */
const READ_BUFFER_BYTES = 16 * 1024;

interface Pump {
  done: Promise<void>;
  cancel(): Promise<void>;
}

/**
 * Reads a stream to its end, handing each chunk on; the chunk's bytes are reused for the next
 * read, so `onChunk` must copy what it keeps. One buffer per pipe: the default reader allocates
 * a fresh buffer per read, which V8 frees only when it gets round to it.
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

/** Writes the text and closes stdin; a child that exits without reading is not an error. */
function feed(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  text: string,
  primed?: Promise<void>,
): Pump {
  const done = (async () => {
    try {
      await primed;
      if (text) await writer.write(new TextEncoder().encode(text));
      await writer.close();
    } catch {
      await writer.abort().catch(() => {});
    }
  })();
  return { done, cancel: () => writer.abort().catch(() => {}) };
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

/** Stdout as the consumer wants it: whole lines (bounded) or decoded text. */
function stdoutReader(spec: ChildSpec, onStdout: (piece: string) => void) {
  const lines = new LineSplitter(spec.maxLineBytes, "drop");
  const text = new TextDecoder();
  return {
    push(bytes: Uint8Array) {
      if (spec.stdout === "text") {
        const piece = text.decode(bytes, { stream: true });
        if (piece) onStdout(piece);
      } else lines.push(bytes).forEach(onStdout);
    },
    end() {
      if (spec.stdout === "text") {
        const rest = text.decode();
        if (rest) onStdout(rest);
      } else lines.end().forEach(onStdout);
    },
    get dropped() {
      return lines.overflowed;
    },
  };
}

/** The last stderr lines, each bounded, every line also handed to `onLine`. */
function stderrTail(onLine?: (line: string) => void) {
  const lines = new LineSplitter(STDERR_LINE_BYTES, "truncate");
  const tail: string[] = [];
  const keep = (line: string) => {
    onLine?.(line);
    if (!line.trim()) return;
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
  };
  return {
    tail,
    push: (bytes: Uint8Array) => lines.push(bytes).forEach(keep),
    end: () => lines.end().forEach(keep),
  };
}

/** Spawns a child in its own process group. Never throws: a child that cannot start is an error. */
export function spawnChild(spec: ChildSpec): RunningChild | { spawnError: string } {
  const plan = spawnPlan(spec, spec.groupSpawn);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(plan.program, {
      args: plan.args,
      cwd: spec.cwd,
      env: spec.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: plan.detached,
    }).spawn();
  } catch (err) {
    return { spawnError: describeSpawnError(err, spec) };
  }
  const pid = child.pid;
  spec.groups?.add(pid);

  let exited = false;
  let ending: Promise<void> | undefined;
  const end = () => ending ??= endGroup(child, { graceMs: spec.killGraceMs, exited: () => exited });

  const stdinWriter = child.stdin.getWriter();
  const primed = spec.stdinPrimer
    ? stdinWriter.write(new TextEncoder().encode(spec.stdinPrimer)).catch(() => {})
    : undefined;
  let stdin: Pump | undefined;
  const deliver = (text: string) => {
    stdin ??= feed(stdinWriter, text, primed);
  };
  let stdout: (Pump & { reader: ReturnType<typeof stdoutReader> }) | undefined;
  const read = (onStdout: (piece: string) => void) => {
    if (stdout) return;
    const reader = stdoutReader(spec, onStdout);
    stdout = { ...pump(child.stdout, (bytes) => reader.push(bytes)), reader };
  };
  const stderr = stderrTail(spec.onStderrLine);
  const stderrPump = pump(child.stderr, stderr.push);

  const ended = (async (): Promise<ChildEnd> => {
    const status = await child.status;
    exited = true;
    // Grandchildren left in the group are ended too; they may hold the pipes open.
    await end();
    spec.groups?.remove(pid);
    deliver("");
    if (!stdout) await child.stdout.cancel().catch(() => {});
    const pumps = [stdin!, stderrPump, ...(stdout ? [stdout] : [])];
    const drained = Promise.all(pumps.map((p) => p.done));
    if (!await settlesWithin(drained, spec.killGraceMs)) {
      // Something outside the group still holds a pipe: stop reading, keep what came.
      await Promise.all(pumps.map((p) => p.cancel()));
      await drained;
    }
    stdout?.reader.end();
    stderr.end();
    return {
      exitCode: status.code,
      signal: status.signal,
      spawnError: plan.wrapped
        ? setsidExecError(spec, plan.wrapped, status.code, stderr.tail)
        : undefined,
      stderrTail: stderr.tail,
      droppedLines: stdout?.reader.dropped ?? 0,
    };
  })();
  return { pid, read, deliver, end, exited: child.status.then(() => {}), ended };
}
