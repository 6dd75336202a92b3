/**
 * Action turns: each child proposes one action; valid proposals are tallied, and a unanimous
 * one is taken as is, otherwise the synthesizer picks one by number (copied verbatim).
 */
import {
  type Ballot,
  describeProposal,
  mostProposed,
  parseChoice,
  readReply,
  resolveChoice,
  tally,
  ToolChecker,
} from "./structured_replies.ts";
import { callAgent } from "../calls/calls.ts";
import { childFailure, type ChildReply, runChildren, type WaitRule } from "../calls/children.ts";
import type { Failure } from "../turn/notices.ts";
import { choiceOf } from "./choice.ts";
import type { RunPlan } from "../plan/plan.ts";
import { fitFor } from "../prompt/compose.ts";
import { actionPrompt, type NumberedProposal, selectionPrompt } from "../prompt/prompts.ts";
import { EarlySynthesizer } from "../calls/early_synth.ts";
import { synthesizerOrder } from "../plan/synthesizers.ts";
import type { TurnContext } from "../turn/context.ts";
import type { Outcome } from "../types.ts";
import { recordChoice } from "./choice_record.ts";

export async function actionTurn(turn: TurnContext, plan: RunPlan): Promise<Outcome> {
  const request = turn.request;
  const children = plan.kind === "single" ? [plan.child] : plan.children;
  // The host runs the chosen tool itself: children only need to look (unless configured).
  const access = turn.env.config.childAccess;
  const checker = new ToolChecker(request.tools);
  EarlySynthesizer.start(turn, plan, access);
  const replies = await runChildren(
    turn,
    children,
    (child) =>
      actionPrompt(
        request,
        request.tools,
        child.directive,
        fitFor(request, child.agent, child.model),
      ),
    { place: () => ({ access }), wait: proposalRule(checker) },
  );
  if (turn.signal.aborted) return turn.cancelled();

  const ballots: Ballot[] = [];
  const prose: ChildReply[] = [];
  const failures: Failure[] = [];
  const kinds = new Map<string, "valid" | "invalid" | "none">();
  for (const reply of replies) {
    const { child, result } = reply;
    kinds.set(child.label, "none");
    if (!result.ok || !result.text.trim()) {
      failures.push(childFailure(reply));
      continue;
    }
    const reading = readReply(result.text, checker);
    if (reading.kind === "dropped") {
      kinds.set(child.label, "invalid");
      turn.progress(`${child.label}: ${reading.reason}`, "info");
      failures.push({ label: child.label, reason: reading.reason });
      if (reading.prose) prose.push(reply);
      continue;
    }
    const { proposal } = reading;
    kinds.set(child.label, "valid");
    turn.progress(`${child.label} proposes ${describeProposal(proposal)}`, "info");
    ballots.push({ child: child.index, proposal });
  }
  const decide = (proposal: Outcome) => {
    const record = recordChoice(request.id, proposal, ballots, replies, kinds);
    turn.noteSignals({ calls: record.calls, chosen: record.chosen });
    return record.outcome;
  };

  if (ballots.length === 0) {
    turn.noteSignals({ calls: recordChoice(request.id, NO_CHOICE, [], replies, kinds).calls });
    if (prose.length > 0) {
      // Tolerance: a child that ignored the format but replied in prose still answered.
      turn.progress(`no valid action — ${prose[0].child.label}'s reply becomes the answer`, "info");
      return { kind: "answer", text: prose[0].result.text.trim() };
    }
    return turn.allFailed(failures);
  }
  const groups = tally(ballots);
  if (groups.length === 1) {
    const { first, votes } = groups[0];
    turn.progress(
      `${votes === 1 ? "one valid proposal" : `unanimous (${votes} agents)`}: ` +
        `${describeProposal(first.proposal)} — synthesis skipped`,
      "info",
    );
    return decide(first.proposal);
  }
  const chosen = await select(turn, ballots, replies, children.length);
  return turn.signal.aborted ? chosen : decide(chosen);
}

/** Nothing was chosen (no valid proposal): only the children's parts are recorded. */
const NO_CHOICE: Outcome = { kind: "answer", text: "" };

/** The valid proposal of a finished reply, if it has one. */
function ballotOf(reply: ChildReply, checker: ToolChecker): Ballot | undefined {
  if (!reply.result.ok || !reply.result.text.trim()) return undefined;
  const reading = readReply(reply.result.text, checker);
  return reading.kind === "dropped"
    ? undefined
    : { child: reply.child.index, proposal: reading.proposal };
}

/**
 * On an action turn a valid proposal counts toward the quorum, and a majority of all children
 * proposing the same action decides the turn at once.
 */
function proposalRule(checker: ToolChecker): WaitRule {
  return {
    usable: (reply) => ballotOf(reply, checker) !== undefined,
    decided: (finished, childCount) => {
      const ballots = finished.flatMap((r) => ballotOf(r, checker) ?? []);
      const [top] = tally(ballots).sort((a, b) => b.votes - a.votes);
      if (!top || top.votes * 2 <= childCount) return undefined;
      return `majority: ${top.votes} of ${childCount} propose ${
        describeProposal(top.first.proposal)
      }`;
    },
  };
}

/** The synthesizer picks a proposal by number (copied verbatim) or writes an answer. */
async function select(
  turn: TurnContext,
  ballots: Ballot[],
  replies: ChildReply[],
  childCount: number,
): Promise<Outcome> {
  const request = turn.request;
  const groups = tally(ballots);
  const proposals: NumberedProposal[] = groups.map((g) => ({
    proposal: g.first.proposal,
    votes: g.votes,
  }));
  const synthesizers = synthesizerOrder(turn, replies);
  const early = turn.earlySynth?.claim(synthesizers[0]);
  for (const [k, agent] of synthesizers.entries()) {
    turn.progress(`${agent.name} chooses among ${groups.length} proposals`, "info");
    const fit = fitFor(request, agent);
    const prompt = selectionPrompt(request, request.tools, proposals, childCount, fit);
    const result = await callAgent(turn, agent, prompt, {
      role: "synth",
      label: `${agent.name} (synth)`,
      access: turn.env.config.childAccess,
      prepared: k === 0 ? early : undefined,
    });
    if (turn.signal.aborted) return turn.cancelled();
    if (!result.ok) continue;
    const chosen = resolveChoice(parseChoice(result.text), groups);
    if (chosen) {
      turn.progress(`${agent.name} chose ${chosen.describe}`, "info");
      turn.env.observer.synthesizerChose(
        request.id,
        choiceOf(agent.name, chosen, ballots, replies),
      );
      return chosen.proposal;
    }
    turn.progress(`${agent.name}'s choice is unusable`, "info");
    break;
  }
  const fallback = mostProposed(ballots)!;
  turn.progress(
    `falling back to the most-proposed action: ${describeProposal(fallback.proposal)}`,
    "info",
  );
  return fallback.proposal;
}
