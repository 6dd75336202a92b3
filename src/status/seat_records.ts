/**
 * The records seats are computed from, kept in memory for the status document: the ledger's
 * (read at start) and every turn and chosen call's result since, the oldest dropped past a bound.
 */
import type { ResolvedCall } from "../council/action/outcome_signals.ts";
import type { TurnRecord } from "../council/records.ts";
import { ledgerEntry, type LedgerLine, ledgerOutcome } from "../ledger/lines.ts";
import { type SeatRow, seats, seatSentence, type SeatWindow } from "../ledger/seats.ts";

/** Records kept (turn entries and outcomes); older ones leave the `all` window. */
export const SEAT_RECORDS_KEPT = 50_000;

/** An agent's seat as the status document gives it. */
export type SeatFigures = Omit<SeatRow, "agent"> & { sentence: string };

/** A window other than `all` moves with the clock: its figures are kept this long at most. */
const MOVING_WINDOW_MS = 60_000;

export class SeatRecords {
  #records: LedgerLine[] = [];
  /** Bumped on every change: figures computed at an older version are stale. */
  #version = 0;
  /** The last figures per window: the status stream asks every second, records change rarely. */
  #cached = new Map<SeatWindow, { key: string; figures: Map<string, SeatFigures> }>();

  /** Records read from the ledger at start (oldest first). */
  preload(records: readonly LedgerLine[]): void {
    this.#records.unshift(...records.slice(-SEAT_RECORDS_KEPT));
    this.#trim();
  }

  turn(record: TurnRecord): void {
    this.#records.push({ kind: "turn", entry: ledgerEntry(record) });
    this.#trim();
  }

  outcome(session: string, call: ResolvedCall, at: number): void {
    this.#records.push({ kind: "outcome", outcome: ledgerOutcome(call, session, at) });
    this.#trim();
  }

  /** Each agent's seat over the window, by agent name. */
  figures(window: SeatWindow, now: number, names: readonly string[]): Map<string, SeatFigures> {
    const moment = window === "all" ? 0 : Math.floor(now / MOVING_WINDOW_MS);
    const key = `${this.#version}\u0000${window}\u0000${moment}\u0000${names.join("\u0000")}`;
    const cached = this.#cached.get(window);
    if (cached?.key === key) return cached.figures;
    const figures = this.#compute(window, now, names);
    this.#cached.set(window, { key, figures });
    return figures;
  }

  #compute(window: SeatWindow, now: number, names: readonly string[]): Map<string, SeatFigures> {
    return new Map(
      seats(this.#records, window, now, names).map((row) => {
        const { agent, ...seat } = row;
        return [agent, { ...seat, sentence: seatSentence(row) }];
      }),
    );
  }

  #trim(): void {
    this.#version++;
    if (this.#records.length > SEAT_RECORDS_KEPT) {
      this.#records.splice(0, this.#records.length - SEAT_RECORDS_KEPT);
    }
  }
}
