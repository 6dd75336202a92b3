/**
 * `usage`: spend from the turn ledger summarised per day (UTC), per session and per agent, as
 * tables or JSON.
 */
import { readLedger } from "../ledger/mod.ts";
import type { LedgerEntry, LedgerScan } from "../ledger/mod.ts";
import { table } from "./doctor.ts";

interface Spend {
  inputTokens: number;
  outputTokens: number;
  usd: number;
}

interface DayUsage extends Spend {
  /** YYYY-MM-DD (UTC). */
  day: string;
  /** Turns that ran a council (capped turns are not counted). */
  turns: number;
  calls: number;
}

interface SessionUsage extends Spend {
  session: string;
  first: string;
  last: string;
  turns: number;
}

interface AgentUsage extends Spend {
  agent: string;
  calls: number;
  /** Calls that failed, timed out or were aborted. */
  failed: number;
}

export interface UsageSummary extends Spend {
  ledger: string;
  turns: number;
  calls: number;
  /** Turns answered with a cap notice instead of a council. */
  capped: number;
  cancelled: number;
  /** Lines that were not valid ledger entries. */
  skipped: number;
  days: DayUsage[];
  sessions: SessionUsage[];
  agents: AgentUsage[];
}

const zero = (): Spend => ({ inputTokens: 0, outputTokens: 0, usd: 0 });

function add(into: Spend, from: { inputTokens: number; outputTokens: number }, usd: number): void {
  into.inputTokens += from.inputTokens;
  into.outputTokens += from.outputTokens;
  into.usd += usd;
}

/** Folds ledger entries into the summary (pure; `summarizeLedger` reads the file). */
class UsageTally {
  #days = new Map<string, DayUsage>();
  #sessions = new Map<string, SessionUsage>();
  #agents = new Map<string, AgentUsage>();
  #totals = { ...zero(), turns: 0, calls: 0, capped: 0, cancelled: 0 };

  add(entry: LedgerEntry): void {
    const turns = entry.counted ? 1 : 0;
    const totals = this.#totals;
    add(totals, entry, entry.costUsd);
    totals.turns += turns;
    totals.calls += entry.calls.length;
    if (entry.decision === "capped") totals.capped++;
    if (entry.cancelled) totals.cancelled++;

    const dayKey = entry.time.slice(0, 10);
    const day = this.#days.get(dayKey) ?? { day: dayKey, turns: 0, calls: 0, ...zero() };
    day.turns += turns;
    day.calls += entry.calls.length;
    add(day, entry, entry.costUsd);
    this.#days.set(dayKey, day);

    const session = this.#sessions.get(entry.session) ??
      { session: entry.session, first: entry.time, last: entry.time, turns: 0, ...zero() };
    session.turns += turns;
    if (entry.time < session.first) session.first = entry.time;
    if (entry.time > session.last) session.last = entry.time;
    add(session, entry, entry.costUsd);
    this.#sessions.set(entry.session, session);

    for (const call of entry.calls) {
      const agent = this.#agents.get(call.agent) ??
        { agent: call.agent, calls: 0, failed: 0, ...zero() };
      agent.calls++;
      if (call.status !== "ok") agent.failed++;
      add(agent, call, call.costUsd);
      this.#agents.set(call.agent, agent);
    }
  }

  summary(ledger: string, scan: Pick<LedgerScan, "skipped">): UsageSummary {
    const byUsd = (a: Spend, b: Spend) => b.usd - a.usd;
    return {
      ledger,
      ...this.#totals,
      skipped: scan.skipped,
      days: [...this.#days.values()].sort((a, b) => a.day.localeCompare(b.day)),
      sessions: [...this.#sessions.values()].sort((a, b) =>
        byUsd(a, b) || b.last.localeCompare(a.last)
      ),
      agents: [...this.#agents.values()].sort((a, b) =>
        byUsd(a, b) || a.agent.localeCompare(b.agent)
      ),
    };
  }
}

/** A summary of turn entries read elsewhere (the shared database), `source` naming where. */
export function summarizeEntries(source: string, entries: Iterable<LedgerEntry>): UsageSummary {
  const tally = new UsageTally();
  for (const entry of entries) tally.add(entry);
  return tally.summary(source, { skipped: 0 });
}

/** Reads the ledger at `path` (which must exist) into a summary. */
export function summarizeLedger(path: string): UsageSummary {
  Deno.statSync(path);
  const tally = new UsageTally();
  const scan = readLedger(path, (entry) => tally.add(entry));
  return tally.summary(path, scan);
}

const usd = (n: number) => `$${n.toFixed(4)}`;
const int = (n: number) => n.toLocaleString("en-US");
/** `2026-01-02T03:04:05.006Z` → `2026-01-02 03:04`. */
const minute = (iso: string) => iso.slice(0, 16).replace("T", " ");

/** The summary as three aligned tables under a totals line. */
export function renderUsage(summary: UsageSummary): string {
  const notes = [
    summary.capped ? `${int(summary.capped)} capped` : "",
    summary.cancelled ? `${int(summary.cancelled)} cancelled` : "",
    summary.skipped ? `${int(summary.skipped)} invalid line(s) skipped` : "",
  ].filter(Boolean);
  const head = `Ledger ${summary.ledger}: ${int(summary.turns)} turns, ` +
    `${int(summary.sessions.length)} sessions, ${int(summary.calls)} agent calls, ` +
    `${usd(summary.usd)}${notes.length ? ` (${notes.join(", ")})` : ""}\n`;
  if (summary.days.length === 0) return `${head}No turns recorded yet.\n`;
  const tokens = (s: Spend) => [int(s.inputTokens), int(s.outputTokens)];
  const days = table([
    ["day (UTC)", "turns", "calls", "input tok", "output tok", "cost"],
    ...summary.days.map((d) => [d.day, int(d.turns), int(d.calls), ...tokens(d), usd(d.usd)]),
  ]);
  const sessions = table([
    ["session", "first (UTC)", "last (UTC)", "turns", "input tok", "output tok", "cost"],
    ...summary.sessions.map((s) => [
      s.session.slice(0, 12),
      minute(s.first),
      minute(s.last),
      int(s.turns),
      ...tokens(s),
      usd(s.usd),
    ]),
  ]);
  const agents = table([
    ["agent", "calls", "failed", "input tok", "output tok", "cost"],
    ...summary.agents.map((a) => [a.agent, int(a.calls), int(a.failed), ...tokens(a), usd(a.usd)]),
  ]);
  return `${head}\nPer day\n${days}\nPer session\n${sessions}\nPer agent\n${agents}`;
}
