/**
 * An action turn's synthesis choice as an observer sees it: which agents' proposals were before
 * the synthesizer, and whose it chose.
 */
import { type Ballot, canonicalJson } from "./structured_replies.ts";
import type { ChildReply } from "../calls/children.ts";
import type { SynthesisChoice } from "../observer.ts";
import type { Outcome } from "../types.ts";

export function choiceOf(
  synthesizer: string,
  chosen: { proposal: Outcome },
  ballots: readonly Ballot[],
  replies: readonly ChildReply[],
): SynthesisChoice {
  const agentOf = (ballot: Ballot) =>
    replies.find((r) => r.child.index === ballot.child)?.child.agent.name ?? "?";
  const key = canonicalJson(chosen.proposal);
  return {
    synthesizer,
    candidates: ballots.map(agentOf),
    chosen: ballots.filter((b) => canonicalJson(b.proposal) === key).map(agentOf),
  };
}
