/**
 * The synthesis of a fanned-out answer turn: the synthesizer sends one candidate as written
 * (a pick, decided from the start of its reply) or writes the answer from the candidates; under
 * isolation the chosen candidate's changes are applied. Fallback synthesizers follow in order.
 */
import type { AgentConfig } from "../../config/mod.ts";
import type { AgentResult, PreparedRun } from "../../agents/types.ts";
import { callAgent } from "../calls/calls.ts";
import { CallControl } from "../calls/call_control.ts";
import type { ChildReply } from "../calls/children.ts";
import { type ChangeChoice, ChoiceLineReader } from "./change_choice.ts";
import type { ChildWorkspaces } from "../calls/child_workspaces.ts";
import { fitFor } from "../prompt/compose.ts";
import { type Failure, failureReason } from "../turn/notices.ts";
import { PickDecider, type PickDecision } from "./pick_decider.ts";
import type { ChildPlan } from "../plan/plan.ts";
import { type SynthesisCandidate, synthesisPrompt } from "../prompt/prompts.ts";
import type { TurnSynthesis } from "../records.ts";
import { NO_SYNTHESIZER, synthesizerOrder } from "../plan/synthesizers.ts";
import { oneLine } from "../../base/text.ts";
import type { TurnContext } from "../turn/context.ts";
import type { Outcome } from "../types.ts";

/** The candidates as the synthesizer sees them, in their shuffled order. */
interface Shown {
  shuffled: ChildReply[];
  /** Each one's reply (paths mapped back from its copy) and diff. */
  shown: SynthesisCandidate[];
  withChanges: boolean;
  workspaces: ChildWorkspaces;
}

/** How one synthesizer call ended. */
type Attempt =
  | { kind: "done" }
  | { kind: "invalid"; reason: string }
  | { kind: "failed"; result: AgentResult };

/** Agent 0 synthesizes; on failure the next agent that answered does; else the best candidate. */
export async function synthesize(
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
  const table: Shown = { shuffled, shown, withChanges: shown.some((c) => c.diff), workspaces };
  const synthesizers = synthesizerOrder(turn, replies);
  const early = turn.earlySynth?.claim(synthesizers[0]);
  const pick = turn.env.config.synthesis === "pick-or-write";
  const failures: Failure[] = [];
  for (const [k, agent] of synthesizers.entries()) {
    let attempt = await synthesizeOnce(turn, agent, table, pick, k === 0 ? early : undefined);
    if (attempt.kind === "invalid") {
      // A choice that names no candidate sends nothing: the same agent writes the answer.
      turn.progress(`${agent.name} replied with ${attempt.reason}; it writes the answer`, "info");
      attempt = await synthesizeOnce(turn, agent, table, false, undefined);
    }
    if (attempt.kind === "done") return { kind: "answer", text: turn.answer.text };
    if (turn.signal.aborted) return turn.cancelled();
    const reason = attempt.kind === "failed" ? failureReason(attempt.result) : attempt.reason;
    failures.push({ label: agent.name, reason });
    const next = synthesizers[k + 1];
    if (turn.answer.sent && next) {
      turn.answer.write(
        `\n\n---\n(${agent.name} stopped while writing this answer; ${next.name} writes it ` +
          `again below.)\n\n`,
      );
    }
  }
  // No synthesizer's answer goes out: the record says none decided.
  turn.synthesized(undefined);
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
  if (table.withChanges) {
    const index = shuffled.indexOf(best);
    await closeWithChanges(turn, workspaces, { kind: "candidate", index }, shuffled);
  }
  return { kind: "answer", text: turn.answer.text };
}

/**
 * One synthesizer call. With `pick` its reply's start is decided before any of it reaches the
 * answer: a pick sends that candidate at once and ends the call; a written answer streams on.
 */
async function synthesizeOnce(
  turn: TurnContext,
  agent: AgentConfig,
  table: Shown,
  pick: boolean,
  prepared: Promise<PreparedRun> | undefined,
): Promise<Attempt> {
  const { shuffled, shown, withChanges, workspaces } = table;
  turn.progress(`${agent.name} synthesizes ${shuffled.length} anonymised candidates`, "info");
  turn.answer.newSegment();
  const prompt = synthesisPrompt(turn.request, shown, fitFor(turn.request, agent), pick);
  const reader = withChanges
    ? new ChoiceLineReader(
      shuffled.length,
      (choice) => turn.progress(describeChoice(agent.name, choice, shuffled), "info"),
    )
    : undefined;
  const written: TurnSynthesis = { kind: "written", agent: agent.name, candidates: shown.length };
  const control = new CallControl(turn.signal);
  const onDecided = (decision: PickDecision) => {
    if (decision.kind === "written") return turn.synthesized(written);
    // Nothing more the synthesizer says is needed.
    control.cut({ kind: "decided", why: decision.kind === "picked" ? "picked" : decision.reason });
    if (decision.kind === "picked") sendPick(turn, agent, table, decision.index);
  };
  const decider = pick ? new PickDecider(shuffled.length, onDecided, reader) : undefined;
  if (!decider) turn.synthesized(written);
  let result: AgentResult;
  try {
    result = await callAgent(turn, agent, prompt, {
      role: "synth",
      label: `${agent.name} (synth)`,
      access: workspaces.synthAccess,
      writesAnswer: true,
      textFilter: decider ?? reader,
      control,
      prepared,
    });
  } finally {
    control.dispose();
  }
  // A reply that did not stream is decided whole.
  const decision = decider?.decision ?? (result.ok ? decider?.decideWhole(result.text) : undefined);
  if (decision?.kind === "invalid") return { kind: "invalid", reason: decision.reason };
  if (decision?.kind === "picked") {
    const choice: ChangeChoice = { kind: "candidate", index: decision.index };
    if (withChanges) await closeWithChanges(turn, workspaces, choice, shuffled);
    return { kind: "done" };
  }
  if (result.ok && (result.text.trim() || turn.answer.segment.trim())) {
    turn.answer.complete(reader ? reader.strip(result.text) : result.text);
    if (reader) await closeWithChanges(turn, workspaces, reader.choice, shuffled);
    return { kind: "done" };
  }
  return { kind: "failed", result };
}

/** The picked candidate goes to the answer as it was written (paths mapped back). */
function sendPick(turn: TurnContext, agent: AgentConfig, table: Shown, index: number): void {
  const { child } = table.shuffled[index];
  turn.synthesized({
    kind: "picked",
    agent: agent.name,
    picked: child.agent.name,
    candidates: table.shown.length,
  });
  turn.progress(`${agent.name} picked ${child.label}'s answer`, "info");
  // Per-agent figures count a pick as action turns count a chosen proposal.
  turn.env.observer.synthesizerChose(turn.request.id, {
    synthesizer: agent.name,
    candidates: table.shuffled.map((reply) => reply.child.agent.name),
    chosen: [child.agent.name],
  });
  turn.answer.complete(table.shown[index].text);
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
  const applied = chosen ? await workspaces.apply(chosen) : undefined;
  turn.noteSignals({
    workspace: chosen && applied
      ? { status: applied.status, agent: chosen.agent.name }
      : { status: "none" },
  });
  const line = applied
    ? applied.line
    : choice.kind === "none"
    ? "No file changes were applied: none of the candidates' changes were chosen."
    : "No file changes were applied: the synthesizer did not say whose changes to apply.";
  turn.answer.write(`\n\n---\n${line}`);
}

/** Fisher–Yates with an injected random source. */
export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(random() * (i + 1)));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
