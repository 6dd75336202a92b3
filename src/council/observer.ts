/**
 * What the council tells an observer about its turns while they run, so that live state (a
 * status API, a dashboard) can be read without the council knowing who reads it.
 */
import type { AgentEvent, AgentRole } from "../agents/types.ts";
import type { CallRecord, TurnDecision, TurnRecord } from "./records.ts";
import type { ResolvedCall } from "./action/outcome_signals.ts";

/** A turn as it starts. */
export interface LiveTurnStart {
  turnId: string;
  sessionKey: string;
  /** The model name the host asked for. */
  model: string;
  /** `action` when the host declared tools (one tool call or an answer comes back). */
  kind: "answer" | "action";
  continuation: boolean;
  /** Epoch ms, from the council's clock. */
  startedAt: number;
}

/** An agent call as it starts. */
export interface CallStart {
  /** Label in progress lines (`claude`, `claude#2`, `claude (synth)`, `judge`). */
  label: string;
  agent: string;
  role: AgentRole;
  /** The model the call runs (an override, else the agent's own). */
  model: string;
  startedAt: number;
}

/** The synthesizer picked a candidate (an action turn's proposal, chosen by number). */
export interface SynthesisChoice {
  synthesizer: string;
  /** Agents whose candidate was before the synthesizer. */
  candidates: string[];
  /** Agents whose candidate it chose (several when they proposed the same); empty: none. */
  chosen: string[];
}

/** The observer's handle on one call. */
export interface CallObserver {
  event(event: AgentEvent): void;
  ended(record: CallRecord): void;
}

export interface TurnObserver {
  turnStarted(turn: LiveTurnStart): void;
  turnDecided(turnId: string, decision: TurnDecision): void;
  callStarted(turnId: string, call: CallStart): CallObserver;
  synthesizerChose(turnId: string, choice: SynthesisChoice): void;
  /** Once per turn, after its spend is booked (the record a ledger keeps). */
  turnEnded(record: TurnRecord): void;
  /** The host reported what became of a call a council chose (outcome signals). */
  callResolved?(session: string, call: ResolvedCall, at: number): void;
}

const ignoreCall: CallObserver = { event: () => {}, ended: () => {} };

/** Observes nothing: the council's default. */
export const NO_OBSERVER: TurnObserver = {
  turnStarted: () => {},
  turnDecided: () => {},
  callStarted: () => ignoreCall,
  synthesizerChose: () => {},
  turnEnded: () => {},
};

/**
 * The observer with every notification guarded: an observer that throws is reported through
 * `onError` and never breaks a turn.
 */
export function guardObserver(
  observer: TurnObserver,
  onError: (error: unknown) => void,
): TurnObserver {
  const guard = <A extends unknown[], R>(fn: (...args: A) => R, fallback: R) => (...args: A) => {
    try {
      return fn(...args);
    } catch (error) {
      onError(error);
      return fallback;
    }
  };
  return {
    turnStarted: guard((turn) => observer.turnStarted(turn), undefined),
    turnDecided: guard((id, decision) => observer.turnDecided(id, decision), undefined),
    callStarted: guard((id, call) => {
      const watch = observer.callStarted(id, call);
      return {
        event: guard((event) => watch.event(event), undefined),
        ended: guard((record) => watch.ended(record), undefined),
      };
    }, ignoreCall),
    synthesizerChose: guard((id, choice) => observer.synthesizerChose(id, choice), undefined),
    turnEnded: guard((record) => observer.turnEnded(record), undefined),
    callResolved: guard(
      (session, call, at) => observer.callResolved?.(session, call, at),
      undefined,
    ),
  };
}
