/**
 * What a finished turn leaves behind for a ledger: its decision and every agent call it made.
 */
import type { AgentRole, AgentUsage } from "../agents/types.ts";
import type { Outcome, TurnUsage } from "./types.ts";

/** The call a council's action turn chose, and how many children proposed what. */
export interface ChosenCallRecord {
  agent: string;
  label: string;
  /** The tool_use id the host got it under. */
  toolUseId?: string;
  tool?: string;
  /** Proposals that were this same call. */
  votes: number;
  proposals: number;
  valid: number;
}

/** A child's part in its turn's choice (action turns). */
export interface CallSignal {
  proposal?: "valid" | "invalid" | "none";
  /** Its proposal is the call the council chose. */
  agreed?: boolean;
  /** It is the child credited with the chosen call. */
  chosen?: boolean;
}

/** What a turn leaves for its outcome signals (set by the step that decided it). */
export interface TurnSignals {
  chosen?: ChosenCallRecord;
  workspace?: WorkspaceRecord;
  /** Each child's part, by label. */
  calls?: ReadonlyMap<string, CallSignal>;
}

/** Under isolation: what became of the chosen candidate's file changes. */
export interface WorkspaceRecord {
  status: "applied" | "refused" | "conflict" | "none";
  agent?: string;
}

/** What the turn decided before running agents: how many, which, and why. */
export interface TurnDecision {
  /**
   * `single` / `fanout`: a council ran; `capped`: the session was at a cap; `refused`: its spend
   * could not be recorded under a spend cap; `no-agents`: none configured; `unplanned`: the turn
   * ended before planning finished (cancelled while waiting, or broken).
   */
  kind: "single" | "fanout" | "capped" | "refused" | "no-agents" | "unplanned";
  reason: string;
  /** Labels of the children consulted (empty when none ran). */
  agents: string[];
  /** How a fanned-out answer turn's answer came to be, once its synthesizer decided. */
  synthesis?: TurnSynthesis;
}

/** Whether the synthesizer sent one candidate as written or wrote the answer itself. */
export interface TurnSynthesis {
  kind: "picked" | "written";
  /** The synthesizer's agent. */
  agent: string;
  /** The agent whose candidate was sent (picked only). */
  picked?: string;
  /** Candidates it had. */
  candidates: number;
}

/** One agent call of a turn (judge, child or synthesizer), as it ended. */
export interface CallRecord extends CallSignal {
  /** Label in progress lines (`claude`, `claude#2`, `claude (synth)`, `judge`). */
  label: string;
  agent: string;
  model: string;
  role: AgentRole;
  ok: boolean;
  timedOut: boolean;
  aborted: boolean;
  exitCode: number | null;
  durationMs: number;
  usage: AgentUsage;
  /** Set when the council ended the call early: enough answers were in, or upstream retries. */
  cutOff?: "quorum" | "retries";
}

/** One finished turn, as a ledger would keep it. */
export interface TurnRecord {
  turnId: string;
  sessionKey: string;
  usage: TurnUsage;
  /** The session's counters after this turn. */
  sessionTurns: number;
  sessionUsd: number;
  outcomeKind: Outcome["kind"];
  /** When the turn ended (epoch ms, from the council's clock). */
  endedAt: number;
  /** Whether the turn counted toward the session's turn cap (not when capped or agentless). */
  counted: boolean;
  decision: TurnDecision;
  /** Every agent call, in the order they ended. */
  calls: CallRecord[];
  /** No agent produced anything. */
  failed: boolean;
  /** The turn was cancelled (client gone or shutdown); the spend of the calls made still counts. */
  cancelled: boolean;
  chosen?: ChosenCallRecord;
  workspace?: WorkspaceRecord;
}
