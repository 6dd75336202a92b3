/**
 * The council's journal written to the shared store's ledger rows: the same records the JSONL
 * ledger writes, queued in order and retried until the database takes them.
 */
import type { ResolvedCall } from "../council/action/outcome_signals.ts";
import type { TurnJournal, TurnStart } from "../council/journal.ts";
import type { CallRecord, TurnRecord } from "../council/records.ts";
import { ledgerCallLine, ledgerEntry, ledgerOutcome, ledgerStart } from "../ledger/lines.ts";
import type { Availability, RetryQueue } from "./availability.ts";
import type { LedgerRecordLike, LedgerRows } from "./ledger_rows.ts";

export class StoreJournal implements TurnJournal {
  #rows: LedgerRows;
  #writes: RetryQueue;
  #availability: Availability;

  constructor(rows: LedgerRows, writes: RetryQueue, availability: Availability) {
    this.#rows = rows;
    this.#writes = writes;
    this.#availability = availability;
  }

  started(start: TurnStart): void {
    this.#append(ledgerStart(start));
  }

  called(start: TurnStart, call: CallRecord, endedAt: number): void {
    this.#append(ledgerCallLine(start, call, endedAt));
  }

  ended(record: TurnRecord): void {
    this.#append(ledgerEntry(record));
  }

  /** An outcome signal: what became of a turn's chosen call (its own record, kind `outcome`). */
  resolved(session: string, call: ResolvedCall, at: number): void {
    this.#append(ledgerOutcome(call, session, at));
  }

  #append(record: unknown): void {
    const row = record as LedgerRecordLike;
    this.#writes.push(() => this.#availability.watch(() => this.#rows.append(row)));
  }
}
