/**
 * The ledger file: whole lines appended and fsynced (a torn last line is closed off first), and
 * lines read back with memory bounded by one line.
 */
import { LineSplitter } from "../base/line_splitter.ts";

const encoder = new TextEncoder();
const NEWLINE = 0x0a;

/** Whether the file's last byte is a newline (or the file is empty). */
function endsWhole(file: Deno.FsFile): boolean {
  if (file.statSync().size === 0) return true;
  file.seekSync(-1, Deno.SeekMode.End);
  const last = new Uint8Array(1);
  return file.readSync(last) !== 1 || last[0] === NEWLINE;
}

/**
 * Appends `line` and a newline and fsyncs before returning, so a turn whose reply has gone out
 * is on disk. A last line torn by a crash mid-write is ended first: it stays one unreadable
 * line instead of swallowing this one. Opened per line: a rotated-away file is started afresh.
 */
export function appendLine(path: string, line: string): void {
  const file = Deno.openSync(path, { read: true, append: true, create: true, mode: 0o600 });
  try {
    const bytes = encoder.encode(`${endsWhole(file) ? "" : "\n"}${line}\n`);
    let offset = 0;
    while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
    file.syncSync();
  } finally {
    file.close();
  }
}

/** A line is at most this long; longer ones are not ledger lines (skipped unbuffered). */
export const MAX_LINE_BYTES = 1024 * 1024;
const READ_CHUNK_BYTES = 64 * 1024;

/** Receives each line (1-based number), or `undefined` text for a line over MAX_LINE_BYTES. */
export type OnLine = (text: string | undefined, lineNumber: number) => void;

/** Feeds chunks to a line splitter and numbers what comes out. */
function lineFeeder(onLine: OnLine) {
  const lines = new LineSplitter(MAX_LINE_BYTES, "drop");
  let lineNumber = 0;
  const take = (text: string) => onLine(text, ++lineNumber);
  return {
    push(chunk: Uint8Array) {
      const before = lines.overflowed;
      lines.push(chunk).forEach(take);
      for (let i = before; i < lines.overflowed; i++) onLine(undefined, ++lineNumber);
    },
    end() {
      lines.end().forEach(take);
    },
  };
}

/** Reads every line synchronously (start-up). A missing file has none; other errors throw. */
export function readLinesSync(path: string, onLine: OnLine): void {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  const feeder = lineFeeder(onLine);
  const buffer = new Uint8Array(READ_CHUNK_BYTES);
  try {
    for (;;) {
      const n = file.readSync(buffer);
      if (n === null) break;
      feeder.push(buffer.subarray(0, n));
    }
    feeder.end();
  } finally {
    file.close();
  }
}

/** Reads every line without blocking the server (a lookup while it serves). */
export async function readLines(path: string, onLine: OnLine): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  const feeder = lineFeeder(onLine);
  const buffer = new Uint8Array(READ_CHUNK_BYTES);
  try {
    for (;;) {
      const n = await file.read(buffer);
      if (n === null) break;
      feeder.push(buffer.subarray(0, n));
    }
    feeder.end();
  } finally {
    file.close();
  }
}
