/**
 * Answer turns: a lone child answers live, or the children answer and a synthesizer makes
 * the one answer from their anonymised, shuffled candidates (answer_synthesis.ts).
 */
import { callAgent } from "../calls/calls.ts";
import { childFailure, runChildren, type WaitRule } from "../calls/children.ts";
import { ChildWorkspaces } from "../calls/child_workspaces.ts";
import { failureReason } from "../turn/notices.ts";
import type { RunPlan } from "../plan/plan.ts";
import { fitFor } from "../prompt/compose.ts";
import { answerPrompt } from "../prompt/prompts.ts";
import { EarlySynthesizer } from "../calls/early_synth.ts";
import { synthesize } from "./answer_synthesis.ts";
import type { TurnContext } from "../turn/context.ts";
import type { Outcome } from "../types.ts";

export async function answerTurn(turn: TurnContext, plan: RunPlan): Promise<Outcome> {
  const conversation = turn.request;
  if (plan.kind === "single") {
    const { child } = plan;
    // A lone child works in the real directory, full-auto (CONTRACT.md §1.1.10); one answering
    // housekeeping (a title, a summary, a compaction) only looks: nothing it does should write.
    const access = turn.request.traffic?.housekeeping ? "read-only" : "workspace-write";
    const fit = fitFor(turn.request, child.agent, child.model);
    const prompt = answerPrompt(conversation, child.directive, fit);
    const result = await callAgent(turn, child.agent, prompt, {
      role: "child",
      label: child.label,
      model: child.model,
      access,
      writesAnswer: true,
    });
    if (result.ok && (result.text.trim() || turn.answer.segment.trim())) {
      turn.answer.complete(result.text);
      return { kind: "answer", text: turn.answer.text };
    }
    if (turn.signal.aborted) return turn.cancelled();
    const failure = { label: child.label, reason: failureReason(result) };
    if (!turn.answer.started) return turn.allFailed([failure]);
    turn.answer.write(`\n\n(${child.label} stopped before finishing: ${failure.reason})`);
    return { kind: "answer", text: turn.answer.text };
  }

  const workspaces = await ChildWorkspaces.prepare(turn, plan.children, turn.env.isolator);
  try {
    if (turn.signal.aborted) return turn.cancelled();
    EarlySynthesizer.start(turn, plan, workspaces.synthAccess);
    const replies = await runChildren(
      turn,
      plan.children,
      (child) => {
        const fit = fitFor(turn.request, child.agent, child.model);
        return workspaces.prompt(child, answerPrompt(conversation, child.directive, fit));
      },
      {
        place: (child) => workspaces.place(child),
        afterEach: (reply) => workspaces.collect(reply),
        wait: ANSWERS,
      },
    );
    if (turn.signal.aborted) return turn.cancelled();
    const candidates = replies.filter(ANSWERS.usable);
    if (candidates.length === 0) return turn.allFailed(replies.map(childFailure));
    // Even a lone surviving candidate goes through the synthesizer: on a fanned-out turn only
    // the synthesizer writes the answer (CONTRACT.md §6.5), and it can still check and fix that draft.
    return await synthesize(turn, candidates, replies, workspaces);
  } finally {
    // A child cut at the quorum, or whose final line came before its exit, may still write in
    // its copy: a kept copy is cleaned for the session's next turn only once every one has ended.
    await turn.windDownAll();
    await workspaces.dispose();
  }
}

/** On an answer turn, any non-empty answer counts toward the quorum. */
const ANSWERS: WaitRule = { usable: (r) => r.result.ok && r.result.text.trim() !== "" };
