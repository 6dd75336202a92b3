/**
 * The turn ledger: one JSON line per finished turn, appended and fsynced, and read back at
 * start-up to rebuild each session's turn count and spend, so a restart resets no cap.
 */
import { resolve } from "node:path";
import type { Logger } from "@logtape/logtape";
import { z } from "zod";
import { LineSplitter } from "./agents/process.ts";
import { moduleLogger } from "./log.ts";
import type { Session, SessionStore } from "./council/session.ts";
import type { CallRecord, TurnRecord } from "./council/records.ts";

export const LEDGER_VERSION = 1;

const count = z.number().int().nonnegative();
const usd = z.number().nonnegative();

/** One agent call of a turn. */
export const LedgerCallSchema = z.object({
  agent: z.string(),
  /** `claude`, `claude#2`, `claude (synth)`, `judge`. */
  label: z.string(),
  role: z.string(),
  model: z.string(),
  status: z.enum(["ok", "failed", "timed-out", "aborted"]),
  durationMs: count,
  inputTokens: count,
  outputTokens: count,
  costUsd: usd,
  /** Cost or tokens were estimated, not reported by the CLI. */
  estimated: z.boolean(),
});
export type LedgerCall = z.infer<typeof LedgerCallSchema>;

/** One line of the ledger. Unknown keys are kept readable by older versions (not strict). */
export const LedgerEntrySchema = z.object({
  v: z.literal(LEDGER_VERSION),
  /** When the turn ended (ISO 8601, UTC). */
  time: z.string(),
  turn: z.string(),
  /** The session key: a SHA-256 hash of the system prompt and first user message. */
  session: z.string().min(1),
  /** The session's turn count after this turn. */
  sessionTurn: count,
  /** The session's spend after this turn (as the running gateway had it). */
  sessionUsd: usd,
  /** Whether the turn counted toward the session's cap (false: capped, or no agents). */
  counted: z.boolean(),
  /** `single`, `fanout`, `capped`, `no-agents`, `unplanned`. */
  decision: z.string(),
  reason: z.string(),
  /** Children consulted. */
  agents: z.array(z.string()),
  calls: z.array(LedgerCallSchema),
  outcome: z.enum(["answer", "tool"]),
  failed: z.boolean(),
  cancelled: z.boolean(),
  wallMs: count,
  inputTokens: count,
  outputTokens: count,
  costUsd: usd,
});
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

function callStatus(call: CallRecord): LedgerCall["status"] {
  if (call.ok) return "ok";
  if (call.timedOut) return "timed-out";
  return call.aborted ? "aborted" : "failed";
}

/** The ledger line of a finished turn. */
export function ledgerEntry(record: TurnRecord): LedgerEntry {
  return {
    v: LEDGER_VERSION,
    time: new Date(record.endedAt).toISOString(),
    turn: record.turnId,
    session: record.sessionKey,
    sessionTurn: record.sessionTurns,
    sessionUsd: record.sessionUsd,
    counted: record.counted,
    decision: record.decision.kind,
    reason: record.decision.reason,
    agents: record.decision.agents,
    calls: record.calls.map((call) => ({
      agent: call.agent,
      label: call.label,
      role: call.role,
      model: call.model,
      status: callStatus(call),
      durationMs: Math.max(0, Math.round(call.durationMs)),
      inputTokens: call.usage.inputTokens,
      outputTokens: call.usage.outputTokens,
      costUsd: call.usage.costUsd,
      estimated: call.usage.estimated,
    })),
    outcome: record.outcomeKind,
    failed: record.failed,
    cancelled: record.cancelled,
    wallMs: Math.max(0, Math.round(record.usage.wallMs)),
    inputTokens: record.usage.inputTokens,
    outputTokens: record.usage.outputTokens,
    costUsd: record.usage.usd,
  };
}

const encoder = new TextEncoder();

/**
 * Appends one line and fsyncs it before returning, so a turn whose reply has gone out is on
 * disk. Opened per line: a rotated-away file is simply started afresh.
 */
export function appendEntry(path: string, entry: LedgerEntry): void {
  const bytes = encoder.encode(`${JSON.stringify(entry)}\n`);
  const file = Deno.openSync(path, { append: true, create: true, mode: 0o600 });
  try {
    let offset = 0;
    while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
    file.syncSync();
  } finally {
    file.close();
  }
}

/** A line is at most this long; longer ones are not ledger lines (skipped unbuffered). */
const MAX_LINE_BYTES = 1024 * 1024;
const READ_CHUNK_BYTES = 64 * 1024;

export interface LedgerScan {
  /** Valid entries handed on. */
  entries: number;
  /** Lines that are not valid entries (e.g. a line torn by a crash mid-write). */
  skipped: number;
  /** The first skipped line's number (1-based) and why, for a warning. */
  firstSkipped?: { line: number; reason: string };
}

/**
 * Reads a ledger line by line (memory bounded by one line), handing on each valid entry. A
 * missing file is an empty ledger; other read errors throw.
 */
export function readLedger(path: string, onEntry: (entry: LedgerEntry) => void): LedgerScan {
  const scan: LedgerScan = { entries: 0, skipped: 0 };
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return scan;
    throw err;
  }
  let lineNumber = 0;
  const skip = (reason: string) => {
    scan.skipped++;
    scan.firstSkipped ??= { line: lineNumber, reason };
  };
  const take = (line: string) => {
    lineNumber++;
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return skip("not JSON");
    }
    const parsed = LedgerEntrySchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return skip(`${issue.path.join(".") || "(line)"}: ${issue.message}`);
    }
    scan.entries++;
    onEntry(parsed.data);
  };
  const lines = new LineSplitter(MAX_LINE_BYTES, "drop");
  const buffer = new Uint8Array(READ_CHUNK_BYTES);
  try {
    for (;;) {
      const n = file.readSync(buffer);
      if (n === null) break;
      const before = lines.overflowed;
      const complete = lines.push(buffer.subarray(0, n));
      complete.forEach(take);
      for (let i = before; i < lines.overflowed; i++) {
        lineNumber++;
        skip(`longer than ${MAX_LINE_BYTES} bytes`);
      }
    }
    lines.end().forEach(take);
  } finally {
    file.close();
  }
  return scan;
}

export interface RebuiltSessions extends LedgerScan {
  /** Least recently used first (the order `SessionStore.restore` should see them in). */
  sessions: Session[];
  /** Turns counted toward caps, over all sessions. */
  turns: number;
  usd: number;
}

/**
 * Each session's counters as the ledger has them: turns = the turns that counted toward its
 * cap, usd = the sum of its turns' spend (cancelled turns included: their calls ran).
 */
export function rebuildSessions(path: string): RebuiltSessions {
  const sessions = new Map<string, Session>();
  let turns = 0;
  let total = 0;
  const scan = readLedger(path, (entry) => {
    const session = sessions.get(entry.session) ?? { key: entry.session, turns: 0, usd: 0 };
    if (entry.counted) session.turns++;
    session.usd += entry.costUsd;
    // Re-insert: the Map's order becomes least recently used first.
    sessions.delete(entry.session);
    sessions.set(entry.session, session);
    if (entry.counted) turns++;
    total += entry.costUsd;
  });
  return { ...scan, sessions: [...sessions.values()], turns, usd: total };
}

/** The ledger file cannot be used (unreadable, or its directory is missing). */
export class LedgerError extends Error {
  override name = "LedgerError";
}

function describe(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "its directory does not exist";
  if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
    return "permission denied";
  }
  if (err instanceof Deno.errors.IsADirectory) return "is a directory";
  return (err as Error)?.message ?? String(err);
}

/**
 * Start-up: rebuilds `sessions` from the ledger at `path` (the most recent `capacity` sessions)
 * and checks the file can be appended to; returns the `onTurnEnd` hook that appends each turn.
 * Throws LedgerError when the file cannot be read or created.
 */
export function openLedger(
  path: string,
  sessions: SessionStore,
  log: Logger = moduleLogger("ledger"),
): (record: TurnRecord) => void {
  const absolute = resolve(path);
  let rebuilt: RebuiltSessions;
  try {
    rebuilt = rebuildSessions(absolute);
    Deno.openSync(absolute, { append: true, create: true, mode: 0o600 }).close();
  } catch (err) {
    throw new LedgerError(`ledger ${absolute}: ${describe(err)}`);
  }
  for (const session of rebuilt.sessions.slice(-sessions.capacity)) sessions.restore(session);
  log.info(
    "ledger {path}: restored {sessions} sessions ({turns} turns, ${usd}) from {entries} entries",
    {
      path: absolute,
      sessions: Math.min(rebuilt.sessions.length, sessions.capacity),
      turns: rebuilt.turns,
      usd: rebuilt.usd.toFixed(4),
      entries: rebuilt.entries,
    },
  );
  if (rebuilt.firstSkipped) {
    log.warn("ledger {path}: skipped {skipped} invalid line(s); first at line {line}: {reason}", {
      path: absolute,
      skipped: rebuilt.skipped,
      ...rebuilt.firstSkipped,
    });
  }
  return (record) => {
    try {
      appendEntry(absolute, ledgerEntry(record));
    } catch (err) {
      log.error("ledger {path}: cannot append turn {turn}: {error}", {
        path: absolute,
        turn: record.turnId,
        error: describe(err),
      });
    }
  };
}
