/**
 * Seats: what each member does for the council, from the ledger's records alone (any store feeds
 * the same function): turns sat, proposals and valid ones, chosen calls and what became of them,
 * agreement with the chosen call, failures, spend and median latency, over a time window.
 */
import type { LedgerEntry, LedgerLine, LedgerOutcome } from "./lines.ts";
import { median } from "../base/median.ts";

export const SEAT_WINDOWS = ["today", "7d", "all"] as const;
export type SeatWindow = (typeof SEAT_WINDOWS)[number];

export interface Seat {
  /** Turns in which it ran as a child. */
  turns: number;
  /** Action-turn replies that proposed something (valid or not). */
  proposals: number;
  valid: number;
  /** Turns whose chosen call (or picked answer) is credited to it. */
  chosen: number;
  chosenOk: number;
  chosenError: number;
  chosenRejected: number;
  /** Its proposal was the chosen call (credited to it or not). */
  agreed: number;
  /** Child calls that failed, timed out or were cut off. */
  failed: number;
  /** Spend of all its calls (child, synthesizer, judge). */
  usd: number;
  /** Median duration of its child calls. */
  medianMs: number;
  /** Chosen turns in which no other child proposed the same (without it, another choice). */
  decisive: number;
}

export interface SeatRow extends Seat {
  agent: string;
}

/** The earliest time (epoch ms) a window covers; days are UTC days. */
export function windowStart(window: SeatWindow, now: number): number {
  if (window === "all") return -Infinity;
  if (window === "7d") return now - 7 * 24 * 3600_000;
  const day = new Date(now);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate());
}

function emptySeat(): Seat {
  return {
    turns: 0,
    proposals: 0,
    valid: 0,
    chosen: 0,
    chosenOk: 0,
    chosenError: 0,
    chosenRejected: 0,
    agreed: 0,
    failed: 0,
    usd: 0,
    medianMs: 0,
    decisive: 0,
  };
}

/** Each turn's first reported result of its chosen call (hosts resend old results). */
function resultsByTurn(outcomes: readonly LedgerOutcome[]): Map<string, LedgerOutcome> {
  const byTurn = new Map<string, LedgerOutcome>();
  for (const outcome of outcomes) {
    if (!byTurn.has(outcome.turn)) byTurn.set(outcome.turn, outcome);
  }
  return byTurn;
}

function addChosen(seat: Seat, entry: LedgerEntry, result: LedgerOutcome | undefined): void {
  seat.chosen++;
  if (entry.chosen && entry.chosen.votes <= 1) seat.decisive++;
  const matches = !entry.chosen?.toolUseId || result?.toolUseId === entry.chosen.toolUseId;
  if (!result || !matches) return;
  if (result.result === "ok") seat.chosenOk++;
  else if (result.result === "error") seat.chosenError++;
  else seat.chosenRejected++;
}

function addTurn(
  seatOf: (agent: string) => Seat,
  durations: (agent: string) => number[],
  entry: LedgerEntry,
  result: LedgerOutcome | undefined,
): void {
  const sat = new Set<string>();
  for (const call of entry.calls) {
    const seat = seatOf(call.agent);
    seat.usd += call.costUsd;
    if (call.role !== "child") continue;
    sat.add(call.agent);
    durations(call.agent).push(call.durationMs);
    if (call.status !== "ok" || call.cutOff) seat.failed++;
    if (call.proposal === "valid" || call.proposal === "invalid") seat.proposals++;
    if (call.proposal === "valid") seat.valid++;
    if (call.agreed) seat.agreed++;
    if (call.chosen) addChosen(seat, entry, result);
  }
  for (const agent of sat) seatOf(agent).turns++;
  // An answer turn whose synthesis sent one candidate as it was: that candidate's agent.
  const picked = entry.synthesis?.kind === "picked" ? entry.synthesis.picked : undefined;
  if (picked) {
    const seat = seatOf(picked);
    seat.chosen++;
    seat.decisive++;
  }
}

/**
 * The seats over `records` in `window` (ending at `now`), the agents named in `agents` first
 * (with empty seats when they have no records), then any other agent by name.
 */
export function seats(
  records: Iterable<LedgerLine>,
  window: SeatWindow,
  now: number,
  agents: readonly string[] = [],
): SeatRow[] {
  const since = windowStart(window, now);
  const entries: LedgerEntry[] = [];
  const outcomes: LedgerOutcome[] = [];
  for (const record of records) {
    if (record.kind === "turn" && Date.parse(record.entry.time) >= since) {
      entries.push(record.entry);
    }
    if (record.kind === "outcome") outcomes.push(record.outcome);
  }
  const results = resultsByTurn(outcomes);
  const table = new Map<string, Seat>(agents.map((agent) => [agent, emptySeat()]));
  const times = new Map<string, number[]>();
  const seatOf = (agent: string) => table.get(agent) ?? table.set(agent, emptySeat()).get(agent)!;
  const durations = (agent: string) => times.get(agent) ?? times.set(agent, []).get(agent)!;
  for (const entry of entries) addTurn(seatOf, durations, entry, results.get(entry.turn));
  const others = [...table.keys()].filter((a) => !agents.includes(a)).sort();
  return [...agents, ...others].map((agent) => ({
    agent,
    ...table.get(agent)!,
    medianMs: Math.round(median(times.get(agent) ?? []) ?? 0),
  }));
}

const dollars = (usd: number) => `$${usd.toFixed(2)}`;

/**
 * One plain sentence on what a member did for the council, e.g. `gemini: chosen in 0 of 143
 * turns, agreed with the pick in 91 % — the council would have decided the same without it
 * ($4.10 spent)`.
 */
export function seatSentence(row: SeatRow): string {
  if (row.turns === 0) return `${row.agent}: sat in no turns (${dollars(row.usd)} spent)`;
  const agreed = row.valid > 0
    ? `, agreed with the pick in ${Math.round((row.agreed / row.valid) * 100)} %`
    : "";
  const head = `${row.agent}: chosen in ${row.chosen} of ${row.turns} turns${agreed}`;
  const verdict = row.decisive === 0
    ? " — the council would have decided the same without it"
    : ` — ${row.decisive} of its choices no other member proposed`;
  return `${head}${verdict} (${dollars(row.usd)} spent)`;
}
