/**
 * Agent calls of a turn: one metered, narrated, recorded call, and the children run in parallel.
 */
import { type AgentConfig, isHttpRunner } from "../config.ts";
import type { AgentEvent, AgentResult, AgentRole } from "../agents/types.ts";
import { type Failure, failureReason } from "./notices.ts";
import type { ChildPlan } from "./plan.ts";
import { oneLine } from "../text.ts";
import type { CallRecord } from "./records.ts";
import type { TurnContext } from "./turn_context.ts";
import { turnAttachments } from "./attachments.ts";

export interface CallOptions {
  role: AgentRole;
  label: string;
  model?: string;
  /**
   * The call writes the answer: its text goes to the answer channel, held back while it may be
   * narration before a tool use (which then goes to progress); never to the interleaved log.
   */
  writesAnswer?: boolean;
}

/** One child's reply, with the plan that produced it. */
export interface ChildReply {
  child: ChildPlan;
  result: AgentResult;
}

/** One metered, narrated agent call. Never throws. */
export async function callAgent(
  turn: TurnContext,
  agent: AgentConfig,
  prompt: string,
  options: CallOptions,
): Promise<AgentResult> {
  const { config, runAgent } = turn.env;
  turn.meter.called();
  const tracker = turn.narrator.track(
    options.label,
    !options.writesAnswer && options.role !== "judge",
  );
  let result: AgentResult;
  try {
    result = await runAgent(agent, prompt, {
      role: options.role,
      cwd: turn.request.cwd,
      model: options.model,
      signal: turn.signal,
      turnId: turn.request.id,
      hostCredentials: config.passApiKeys ? turn.request.hostCredentials : undefined,
      // Children and the synthesizer see the images; the judge decides from the text alone.
      attachments: options.role === "judge" ? undefined : turnAttachments(turn.request.transcript),
      onEvent: (event) => {
        tracker.onEvent(event);
        if (options.writesAnswer) toAnswer(turn, agent, options.label, event);
      },
    });
  } catch (err) {
    result = thrownResult(agent, options, err);
  }
  turn.meter.add(result.usage);
  const call: CallRecord = {
    label: options.label,
    agent: agent.name,
    model: result.model,
    role: options.role,
    ok: result.ok,
    timedOut: result.timedOut,
    aborted: result.aborted,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    usage: result.usage,
  };
  turn.calls.push(call);
  turn.journal((journal) => journal.called(turn.start, call, turn.env.clock.now()));
  // The narrator's finish line is the call's one log line (at warn when it failed).
  tracker.finished(result);
  return result;
}

/**
 * Agent CLIs use tools of their own and narrate before them; model APIs and plain commands
 * report no tool use, so their text is the answer from its first token.
 */
function usesTools(agent: AgentConfig): boolean {
  return !isHttpRunner(agent.runner) && agent.runner !== "command";
}

/** An answer-writing call's text, and its tool uses that turn earlier text into narration. */
function toAnswer(turn: TurnContext, agent: AgentConfig, label: string, event: AgentEvent): void {
  if (event.type === "text") {
    if (usesTools(agent)) turn.answer.stream(event.text);
    else turn.answer.write(event.text);
  } else if (event.type === "activity") {
    const narration = turn.answer.toolUsed();
    if (narration) turn.progress(`${label}: ${narration}`, "info");
  }
}

/** Runs every child at once and waits for all of them. */
export function runChildren(
  turn: TurnContext,
  children: readonly ChildPlan[],
  promptFor: (child: ChildPlan) => string,
): Promise<ChildReply[]> {
  return Promise.all(children.map(async (child) => ({
    child,
    result: await callAgent(turn, child.agent, promptFor(child), {
      role: "child",
      label: child.label,
      model: child.model,
    }),
  })));
}

export function childFailure(reply: ChildReply): Failure {
  return { label: reply.child.label, reason: failureReason(reply.result) };
}

function thrownResult(agent: AgentConfig, options: CallOptions, err: unknown): AgentResult {
  return {
    agent: agent.name,
    model: options.model ?? agent.model,
    role: options.role,
    ok: false,
    text: "",
    error: `${agent.name}: ${oneLine(String(err))}`,
    exitCode: null,
    timedOut: false,
    aborted: false,
    durationMs: 0,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
  };
}
