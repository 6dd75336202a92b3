/**
 * The turn ledger as the council's journal: a JSONL file that records each turn's start, each
 * finished call and each turn's end, read back at start-up (and for a session evicted from
 * memory) so that neither a restart nor a crash mid-turn resets a cap or loses spend.
 */
import { resolve } from "node:path";
import type { Logger } from "@logtape/logtape";
import { moduleLogger } from "../base/log.ts";
import type { TurnJournal, TurnStart } from "../council/journal.ts";
import type { SessionStore } from "../council/session.ts";
import type { CallRecord, TurnRecord } from "../council/records.ts";
import { appendLine } from "./file.ts";
import {
  ledgerCallLine,
  type LedgerEntry,
  ledgerEntry,
  ledgerOutcome,
  ledgerStart,
} from "./lines.ts";
import type { ResolvedCall } from "../council/action/outcome_signals.ts";
import { lookupSession, rebuildSessions } from "./sessions.ts";

export { type LedgerCall, type LedgerEntry, ledgerEntry } from "./lines.ts";
export { type LedgerScan, readLedger, rebuildSessions } from "./sessions.ts";

/** Appends one finished turn's entry (fsynced, after closing off a torn last line). */
export function appendEntry(path: string, entry: LedgerEntry): void {
  appendLine(path, JSON.stringify(entry));
}

/** The ledger file cannot be used (unreadable, unwritable, or its directory is missing). */
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

/** A ledger file opened for appending; every method throws LedgerError when it cannot write. */
class Ledger implements TurnJournal {
  constructor(readonly path: string) {}

  started(start: TurnStart): void {
    this.#append(ledgerStart(start), `the start of turn ${start.turnId}`);
  }

  called(start: TurnStart, call: CallRecord, endedAt: number): void {
    this.#append(ledgerCallLine(start, call, endedAt), `a call of turn ${start.turnId}`);
  }

  ended(record: TurnRecord): void {
    this.#append(ledgerEntry(record), `turn ${record.turnId}`);
  }

  resolved(session: string, call: ResolvedCall, at: number): void {
    this.#append(ledgerOutcome(call, session, at), `the result of turn ${call.turn}'s call`);
  }

  #append(line: unknown, what: string): void {
    try {
      appendLine(this.path, JSON.stringify(line));
    } catch (err) {
      throw new LedgerError(`ledger ${this.path}: cannot record ${what}: ${describe(err)}`);
    }
  }
}

/**
 * Start-up: rebuilds `sessions` from the ledger at `path` (the most recent `capacity` sessions
 * in memory; the others are looked up again when they return), settles turns a crash cut
 * short, and checks the file can be appended to. Throws LedgerError when the file cannot be
 * read or written.
 */
export function openLedger(
  path: string,
  sessions: SessionStore,
  log: Logger = moduleLogger("ledger"),
): Ledger {
  const absolute = resolve(path);
  const ledger = new Ledger(absolute);
  let rebuilt;
  try {
    rebuilt = rebuildSessions(absolute);
    for (const entry of rebuilt.interrupted) appendEntry(absolute, entry);
    Deno.openSync(absolute, { append: true, create: true, mode: 0o600 }).close();
  } catch (err) {
    throw new LedgerError(`ledger ${absolute}: ${describe(err)}`);
  }
  sessions.setLookup((key) => lookupSession(absolute, key));
  for (const session of rebuilt.sessions) sessions.restore(session);
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
  if (rebuilt.interrupted.length > 0) {
    log.warn("ledger {path}: settled {count} turn(s) cut short by a stop mid-turn (${usd})", {
      path: absolute,
      count: rebuilt.interrupted.length,
      usd: rebuilt.interrupted.reduce((total, entry) => total + entry.costUsd, 0).toFixed(4),
    });
  }
  if (rebuilt.firstSkipped) {
    log.warn("ledger {path}: skipped {skipped} invalid line(s); first at line {line}: {reason}", {
      path: absolute,
      skipped: rebuilt.skipped,
      ...rebuilt.firstSkipped,
    });
  }
  return ledger;
}
