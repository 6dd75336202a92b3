/**
 * Session counters from the ledger: rebuilt at start-up (settling the turns a crash cut short
 * from the calls they had finished), and looked up again for a session evicted from memory.
 */
import type { Session } from "../council/session.ts";
import { MAX_LINE_BYTES, type OnLine, readLines, readLinesSync } from "./file.ts";
import {
  type LedgerCall,
  type LedgerCallLine,
  type LedgerEntry,
  type LedgerStart,
  parseLine,
} from "./lines.ts";

export interface LedgerScan {
  /** Turn entries handed on. */
  entries: number;
  /** Lines that are not valid ledger lines (e.g. a line torn by a crash mid-write). */
  skipped: number;
  /** The first skipped line's number (1-based) and why, for a warning. */
  firstSkipped?: { line: number; reason: string };
}

interface LineHandlers {
  turn(entry: LedgerEntry): void;
  start?(start: LedgerStart): void;
  call?(line: LedgerCallLine): void;
}

/** An OnLine that sorts lines into the handlers and counts them into `scan`. */
function sorter(handlers: LineHandlers, scan: LedgerScan): OnLine {
  return (text, lineNumber) => {
    const line = text === undefined
      ? { kind: "invalid" as const, reason: `longer than ${MAX_LINE_BYTES} bytes` }
      : parseLine(text);
    switch (line.kind) {
      case "turn":
        scan.entries++;
        return handlers.turn(line.entry);
      case "start":
        return handlers.start?.(line.start);
      case "call":
        return handlers.call?.(line.line);
      case "invalid":
        scan.skipped++;
        scan.firstSkipped ??= { line: lineNumber, reason: line.reason };
    }
  };
}

/**
 * Reads a ledger line by line (memory bounded by one line), handing on each finished turn's
 * entry. A missing file is an empty ledger; other read errors throw.
 */
export function readLedger(path: string, onEntry: (entry: LedgerEntry) => void): LedgerScan {
  const scan: LedgerScan = { entries: 0, skipped: 0 };
  readLinesSync(path, sorter({ turn: onEntry }, scan));
  return scan;
}

interface RebuiltSessions extends LedgerScan {
  /** Least recently used first (the order `SessionStore.restore` should see them in). */
  sessions: Session[];
  /** Turns counted toward caps, over all sessions. */
  turns: number;
  usd: number;
  /**
   * Turns that started and never ended (the gateway died mid-turn), settled from their finished
   * calls: entries to append, so the ledger says what happened and they settle once.
   */
  interrupted: LedgerEntry[];
}

interface OpenTurn {
  start: LedgerStart;
  calls: LedgerCall[];
  /** The time of its last line. */
  lastTime: string;
}

const INTERRUPTED_REASON = "the gateway stopped during this turn; the spend of the calls it had " +
  "finished was settled at the next start";

function sum(calls: readonly LedgerCall[], pick: (call: LedgerCall) => number): number {
  return calls.reduce((total, call) => total + pick(call), 0);
}

/** The entry that closes an interrupted turn, with its session's counters after it. */
function settlement(turn: OpenTurn, session: Session): LedgerEntry {
  const { start, calls } = turn;
  return {
    v: start.v,
    time: turn.lastTime,
    turn: start.turn,
    session: start.session,
    sessionTurn: session.turns,
    sessionUsd: session.usd,
    counted: true,
    decision: "interrupted",
    reason: INTERRUPTED_REASON,
    agents: [...new Set(calls.filter((c) => c.role === "child").map((c) => c.label))],
    calls,
    outcome: "answer",
    failed: true,
    cancelled: true,
    wallMs: Math.max(0, Date.parse(turn.lastTime) - Date.parse(start.time)) || 0,
    inputTokens: sum(calls, (c) => c.inputTokens),
    outputTokens: sum(calls, (c) => c.outputTokens),
    costUsd: sum(calls, (c) => c.costUsd),
  };
}

/**
 * Each session's counters as the ledger has them: turns = the turns that counted toward its
 * cap, usd = the sum of its turns' spend (cancelled and interrupted turns included: their calls
 * ran).
 */
export function rebuildSessions(path: string): RebuiltSessions {
  const sessions = new Map<string, Session>();
  const open = new Map<string, OpenTurn>();
  let turns = 0;
  let total = 0;
  const book = (key: string, counted: boolean, usd: number): Session => {
    const session = sessions.get(key) ?? { key, turns: 0, usd: 0 };
    if (counted) session.turns++;
    session.usd += usd;
    // Re-insert: the Map's order becomes least recently used first.
    sessions.delete(key);
    sessions.set(key, session);
    if (counted) turns++;
    total += usd;
    return session;
  };
  const id = (line: { session: string; turn: string }) => `${line.session}\n${line.turn}`;
  const scan: LedgerScan = { entries: 0, skipped: 0 };
  readLinesSync(
    path,
    sorter({
      turn: (entry) => {
        open.delete(id(entry));
        book(entry.session, entry.counted, entry.costUsd);
      },
      start: (start) => open.set(id(start), { start, calls: [], lastTime: start.time }),
      call: (line) => {
        // A call whose start line was lost still opens its turn: its spend must not be.
        const turn = open.get(id(line)) ??
          { start: { ...line, kind: "start" as const }, calls: [], lastTime: line.time };
        turn.calls.push(line.call);
        turn.lastTime = line.time;
        open.set(id(line), turn);
      },
    }, scan),
  );
  const interrupted = [...open.values()].map((turn) =>
    settlement(turn, book(turn.start.session, true, sum(turn.calls, (c) => c.costUsd)))
  );
  return { ...scan, sessions: [...sessions.values()], turns, usd: total, interrupted };
}

/**
 * One session's counters from the ledger's turn entries, or undefined when it has none. Only
 * lines naming the session are parsed; the file is read without blocking the server.
 */
export async function lookupSession(path: string, key: string): Promise<Session | undefined> {
  const needle = `"session":${JSON.stringify(key)}`;
  const session: Session = { key, turns: 0, usd: 0 };
  let found = false;
  const scan: LedgerScan = { entries: 0, skipped: 0 };
  const sort = sorter({
    turn: (entry) => {
      if (entry.session !== key) return;
      found = true;
      if (entry.counted) session.turns++;
      session.usd += entry.costUsd;
    },
  }, scan);
  await readLines(path, (text, lineNumber) => {
    if (text?.includes(needle)) sort(text, lineNumber);
  });
  return found ? session : undefined;
}
