/**
 * Answer turns: a lone child answers live, or the children answer and a synthesizer combines
 * their anonymised, shuffled candidates into the one answer.
 */
import { callAgent } from "../calls/calls.ts";
import { childFailure, type ChildReply, runChildren, type WaitRule } from "../calls/children.ts";
import { type ChangeChoice, ChoiceLineReader } from "./change_choice.ts";
import { ChildWorkspaces } from "../calls/child_workspaces.ts";
import { type Failure, failureReason } from "../turn/notices.ts";
import type { ChildPlan, RunPlan } from "../plan/plan.ts";
import { oneLine } from "../../base/text.ts";
import { fitFor } from "../prompt/compose.ts";
import { answerPrompt, synthesisPrompt } from "../prompt/prompts.ts";
import { EarlySynthesizer } from "../calls/early_synth.ts";
import { NO_SYNTHESIZER, synthesizerOrder } from "../plan/synthesizers.ts";
import type { TurnContext } from "../turn/context.ts";
import type { Outcome } from "../types.ts";

export async function answerTurn(turn: TurnContext, plan: RunPlan): Promise<Outcome> {
  const conversation = turn.request;
  if (plan.kind === "single") {
    const { child } = plan;
    // A lone child works in the real directory, full-auto (CONTRACT.md §1.1.10).
    const fit = fitFor(turn.request, child.agent, child.model);
    const prompt = answerPrompt(conversation, child.directive, fit);
    const result = await callAgent(turn, child.agent, prompt, {
      role: "child",
      label: child.label,
      model: child.model,
      access: "workspace-write",
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

  const workspaces = await ChildWorkspaces.prepare(turn, plan.children.length, turn.env.isolator);
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
    await workspaces.dispose();
  }
}

/** On an answer turn, any non-empty answer counts toward the quorum. */
const ANSWERS: WaitRule = { usable: (r) => r.result.ok && r.result.text.trim() !== "" };

/** Agent 0 synthesizes; on failure the next agent that answered does; else the best candidate. */
async function synthesize(
  turn: TurnContext,
  candidates: ChildReply[],
  replies: ChildReply[],
  workspaces: ChildWorkspaces,
): Promise<Outcome> {
  const shuffled = shuffle(candidates, turn.env.random);
  const shown = await Promise.all(shuffled.map(async ({ child, result }) => ({
    text: workspaces.answer(child, result.text),
    diff: await workspaces.diffOf(child),
  })));
  const withChanges = shown.some((c) => c.diff);
  const synthesizers = synthesizerOrder(turn, replies);
  const early = turn.earlySynth?.claim(synthesizers[0]);
  const failures: Failure[] = [];
  for (const [k, agent] of synthesizers.entries()) {
    turn.progress(`${agent.name} synthesizes ${candidates.length} anonymised candidates`, "info");
    turn.answer.newSegment();
    const prompt = synthesisPrompt(turn.request, shown, fitFor(turn.request, agent));
    const reader = withChanges
      ? new ChoiceLineReader(
        shuffled.length,
        (choice) => turn.progress(describeChoice(agent.name, choice, shuffled), "info"),
      )
      : undefined;
    const result = await callAgent(turn, agent, prompt, {
      role: "synth",
      label: `${agent.name} (synth)`,
      access: workspaces.synthAccess,
      writesAnswer: true,
      textFilter: reader,
      prepared: k === 0 ? early : undefined,
    });
    if (result.ok && (result.text.trim() || turn.answer.segment.trim())) {
      turn.answer.complete(reader ? reader.strip(result.text) : result.text);
      if (reader) await closeWithChanges(turn, workspaces, reader.choice, shuffled);
      return { kind: "answer", text: turn.answer.text };
    }
    if (turn.signal.aborted) return turn.cancelled();
    failures.push({ label: agent.name, reason: failureReason(result) });
    const next = synthesizers[k + 1];
    if (turn.answer.sent && next) {
      turn.answer.write(
        `\n\n---\n(${agent.name} stopped while writing this answer; ${next.name} writes it ` +
          `again below.)\n\n`,
      );
    }
  }
  const best = candidates[0];
  const why = failures.map((f) => `${f.label}: ${oneLine(f.reason)}`).join("; ") ||
    NO_SYNTHESIZER;
  turn.progress(`no synthesizer succeeded — returning ${best.child.label}'s answer`, "info");
  turn.answer.write(
    `${turn.answer.started ? "\n\n---\n" : ""}${workspaces.answer(best.child, best.result.text)}` +
      `\n\n` +
      `(Note: the council could not combine its answers (${why}); this is ` +
      `${best.child.label}'s answer unchanged.)`,
  );
  // Its own changes go with its own answer.
  if (withChanges) {
    const index = shuffled.indexOf(best);
    await closeWithChanges(turn, workspaces, { kind: "candidate", index }, shuffled);
  }
  return { kind: "answer", text: turn.answer.text };
}

/** The candidate whose changes were chosen, if any. */
function chosenChild(choice: ChangeChoice, shuffled: readonly ChildReply[]): ChildPlan | undefined {
  return choice.kind === "candidate" ? shuffled[choice.index].child : undefined;
}

function describeChoice(
  synthesizer: string,
  choice: ChangeChoice,
  shuffled: readonly ChildReply[],
): string {
  const child = chosenChild(choice, shuffled);
  return child
    ? `${synthesizer} chose ${child.label}'s changes`
    : `${synthesizer} chose no candidate's changes`;
}

/** Applies the chosen changes (if any) and ends the answer with what happened to the files. */
async function closeWithChanges(
  turn: TurnContext,
  workspaces: ChildWorkspaces,
  choice: ChangeChoice,
  shuffled: readonly ChildReply[],
): Promise<void> {
  const chosen = chosenChild(choice, shuffled);
  const line = chosen
    ? await workspaces.apply(chosen)
    : choice.kind === "none"
    ? "No file changes were applied: none of the candidates' changes were chosen."
    : "No file changes were applied: the synthesizer did not say whose changes to apply.";
  turn.answer.write(`\n\n---\n${line}`);
}

/** Fisher–Yates with an injected random source. */
function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(random() * (i + 1)));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
