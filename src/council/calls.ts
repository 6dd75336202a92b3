/**
 * Agent calls of a turn: one metered, narrated, recorded call, and the children run in parallel.
 */
import { type AgentConfig, isHttpRunner } from "../config.ts";
import type {
  AgentEvent,
  AgentPrompt,
  AgentResult,
  AgentRole,
  ChildAccess,
} from "../agents/types.ts";
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
  /** Rewrites an answer-writing call's text on its way to the answer channel. */
  textFilter?: TextFilter;
  /** Where the agent works (default: the turn's working directory). */
  cwd?: string;
  /** What it may do there (default: workspace-write, the spec's full-auto). */
  access?: ChildAccess;
}

/**
 * Takes something out of an answer-writing call's text as it streams (the synthesizer's choice
 * line), one run of text at a time: a tool use, and the call's end, close a run.
 */
export interface TextFilter {
  /** The part of `text` that goes on (possibly held back until a line ends). */
  feed(text: string): string;
  /** The run ended: whatever is still held back. */
  flush(): string;
}

/** Where one child works and what it may do there. */
export interface Placement {
  cwd?: string;
  access: ChildAccess;
}

/** How a turn's children run: where each works, and what follows each one's end. */
export interface ChildRunOptions {
  place: (child: ChildPlan) => Placement;
  /** Awaited after each child's call, before the children's joint result. */
  afterEach?: (reply: ChildReply) => Promise<void>;
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
  prompt: AgentPrompt,
  options: CallOptions,
): Promise<AgentResult> {
  const { config, runAgent } = turn.env;
  turn.meter.called();
  const tracker = turn.narrator.track(
    options.label,
    !options.writesAnswer && options.role !== "judge",
  );
  const watch = turn.env.observer.callStarted(turn.request.id, {
    label: options.label,
    agent: agent.name,
    role: options.role,
    model: options.model ?? agent.model,
    startedAt: turn.env.clock.now(),
  });
  let result: AgentResult;
  try {
    result = await runAgent(agent, prompt, {
      role: options.role,
      cwd: options.cwd ?? turn.request.cwd,
      access: options.access,
      model: options.model,
      signal: turn.signal,
      turnId: turn.request.id,
      hostCredentials: config.passApiKeys ? turn.request.hostCredentials : undefined,
      // Children and the synthesizer see the images; the judge decides from the text alone.
      attachments: options.role === "judge" ? undefined : turnAttachments(turn.request.transcript),
      onEvent: (event) => {
        tracker.onEvent(event);
        watch.event(event);
        if (options.writesAnswer) toAnswer(turn, agent, options, event);
      },
    });
  } catch (err) {
    result = thrownResult(agent, options, err);
  }
  if (options.writesAnswer) passOn(turn, agent, options.textFilter?.flush() ?? "");
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
  watch.ended(call);
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
function toAnswer(
  turn: TurnContext,
  agent: AgentConfig,
  options: CallOptions,
  event: AgentEvent,
): void {
  const filter = options.textFilter;
  if (event.type === "text") {
    passOn(turn, agent, filter ? filter.feed(event.text) : event.text);
  } else if (event.type === "activity") {
    passOn(turn, agent, filter?.flush() ?? "");
    const narration = turn.answer.toolUsed();
    if (narration) turn.progress(`${options.label}: ${narration}`, "info");
  }
}

function passOn(turn: TurnContext, agent: AgentConfig, text: string): void {
  if (usesTools(agent)) turn.answer.stream(text);
  else turn.answer.write(text);
}

/** Runs every child at once and waits for all of them. */
export function runChildren(
  turn: TurnContext,
  children: readonly ChildPlan[],
  promptFor: (child: ChildPlan) => AgentPrompt,
  options: ChildRunOptions,
): Promise<ChildReply[]> {
  return Promise.all(children.map(async (child) => {
    const reply = {
      child,
      result: await callAgent(turn, child.agent, promptFor(child), {
        role: "child",
        label: child.label,
        model: child.model,
        ...options.place(child),
      }),
    };
    await options.afterEach?.(reply);
    return reply;
  }));
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
