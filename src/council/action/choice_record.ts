/**
 * What an action turn of a council leaves for its outcome signals: each child's proposal (valid,
 * invalid, none), who proposed the chosen call and how many agreed, and the chosen call under a
 * tool_use id that names the turn, so the host's result for it can be tied back.
 */
import type { ChildReply } from "../calls/children.ts";
import type { CallSignal, ChosenCallRecord } from "../records.ts";
import type { Outcome } from "../types.ts";
import { chosenCallId } from "./outcome_signals.ts";
import { type Ballot, canonicalJson } from "./structured_replies.ts";

export type ProposalKind = CallSignal["proposal"];

/** The chosen call and what each child's call record gets. */
export interface ChoiceRecord {
  outcome: Outcome;
  /** With its tool_use id when it is a council's chosen call. */
  chosen?: ChosenCallRecord;
  /** By child label. */
  calls: Map<string, CallSignal>;
}

/**
 * Records `proposal` as the turn's choice among the children's replies. Only a tool call chosen
 * among several children is a council's choice: its record gets a tool_use id naming `turnId`;
 * a lone child's call, or an answer, gets none.
 */
export function recordChoice(
  turnId: string,
  proposal: Outcome,
  ballots: readonly Ballot[],
  replies: readonly ChildReply[],
  kinds: ReadonlyMap<string, NonNullable<ProposalKind>>,
): ChoiceRecord {
  const key = canonicalJson(proposal);
  const same = ballots.filter((b) => canonicalJson(b.proposal) === key).map((b) => b.child);
  const labelOf = (index: number) => replies.find((r) => r.child.index === index)?.child;
  const credited = same.length > 0 ? labelOf(same[0]) : undefined;
  const calls = new Map<string, CallSignal>();
  // A lone child's step (a continuation, a single turn) is not a council's choice.
  if (replies.length <= 1) return { outcome: proposal, calls };
  for (const reply of replies) {
    const kind = kinds.get(reply.child.label) ?? "none";
    calls.set(reply.child.label, {
      proposal: kind,
      ...(kind === "valid" ? { agreed: same.includes(reply.child.index) } : {}),
      ...(credited === reply.child ? { chosen: true } : {}),
    });
  }
  const id = proposal.kind === "tool" ? chosenCallId(turnId) : undefined;
  if (!id || !credited) return { outcome: proposal, calls };
  const proposals = [...kinds.values()].filter((k) => k !== "none").length;
  return {
    outcome: proposal,
    calls,
    chosen: {
      agent: credited.agent.name,
      label: credited.label,
      toolUseId: id,
      tool: proposal.kind === "tool" ? proposal.name : undefined,
      votes: same.length,
      proposals,
      valid: ballots.length,
    },
  };
}
