/**
 * What the council records of its turns as they happen (a ledger implements it): each turn's
 * start, each finished call and the turn's end, so that spend survives a crash mid-turn.
 */
import type { CallRecord, TurnRecord } from "./records.ts";
import type { ResolvedCall } from "./action/outcome_signals.ts";

/** An admitted turn, as its start is recorded. */
export interface TurnStart {
  turnId: string;
  sessionKey: string;
  /** Epoch ms, from the council's clock. */
  startedAt: number;
}

/**
 * Each method persists its record before returning and throws an Error saying why when it
 * cannot: the council then says so loudly, and refuses turns while a spend cap depends on it.
 */
export interface TurnJournal {
  /** An admitted turn is about to run its first agent. */
  started(start: TurnStart): void;
  /** A call of a running turn finished (`endedAt` in epoch ms). */
  called(start: TurnStart, call: CallRecord, endedAt: number): void;
  /** The turn ended (capped and refused turns included). */
  ended(record: TurnRecord): void;
  /** The host reported what became of a call a council chose in an earlier turn of `session`. */
  resolved?(session: string, call: ResolvedCall, at: number): void;
}
