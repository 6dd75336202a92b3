/**
 * One agent call of a turn: metered, narrated, recorded, booked to the agent's health, and cut
 * off when it keeps retrying a failing upstream or when the council stops waiting for it.
 */
import type { AgentConfig } from "../../config/mod.ts";
import { cliAdapterOf } from "../../agents/cli/runners.ts";
import type {
  AgentEvent,
  AgentPrompt,
  AgentResult,
  AgentRole,
  ChildAccess,
  PreparedRun,
  RunOptions,
} from "../../agents/types.ts";
import { CallControl, type CutOff } from "./call_control.ts";
import type { CallVerdict } from "./health.ts";
import { cutOffLine, tenthSeconds } from "../turn/progress.ts";
import { oneLine } from "../../base/text.ts";
import type { CallRecord } from "../records.ts";
import type { TurnContext } from "../turn/context.ts";
import { turnAttachments } from "../prompt/turn_attachments.ts";

interface CallOptions {
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
  /** `cwd` is this turn's own copy, which no later turn comes back to. */
  scratch?: boolean;
  /** `cwd` is a copy later turns reuse once this settles (see `RunOptions`). */
  reusedAfter?: Promise<void>;
  /** What it may do there (default: workspace-write, full-auto as CONTRACT.md §1.1.10 says). */
  access?: ChildAccess;
  /** Lets the caller cut the call off (quorum); default: a switch of the call's own. */
  control?: CallControl;
  /** A run of this agent started ahead, to hand the prompt to instead of starting one. */
  prepared?: Promise<PreparedRun>;
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

/** One metered, narrated agent call. Never throws. */
export async function callAgent(
  turn: TurnContext,
  agent: AgentConfig,
  prompt: AgentPrompt,
  options: CallOptions,
): Promise<AgentResult> {
  const { config, runAgent } = turn.env;
  const control = options.control ?? new CallControl(turn.signal);
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
  const events = callEvents(turn, agent, options, control, (event) => {
    watch.event(event);
    // The narrator closes the call below, once the council knows whether it cut it off.
    if (event.type !== "finished") tracker.onEvent(event);
    return event.type !== "finished";
  });
  const runOptions: RunOptions = {
    role: options.role,
    cwd: options.cwd ?? turn.request.cwd,
    scratch: options.scratch,
    reusedAfter: options.reusedAfter,
    access: options.access,
    model: options.model,
    signal: control.signal,
    turnId: turn.request.id,
    hostCredentials: config.passApiKeys ? turn.request.hostCredentials : undefined,
    // Children and the synthesizer see the images; the judge decides from the text alone.
    attachments: options.role === "judge" ? undefined : turnAttachments(turn.request.transcript),
    // A cut-off child's end need not hold the next step; the turn's end waits for it.
    onWindDown: (ended) => turn.windsDown(ended),
    onEvent: events.onEvent,
  };
  let result: AgentResult;
  try {
    result = options.prepared
      ? await (await options.prepared).run(prompt, runOptions)
      : await runAgent(agent, prompt, runOptions);
  } catch (err) {
    result = thrownResult(agent, options, err);
  } finally {
    if (!options.control) control.dispose();
  }
  if (options.writesAnswer) passOn(turn, agent, options.textFilter?.flush() ?? "");
  const settled = control.settle(result);
  // A call ended once its reply was decided did what it was for: it succeeded.
  const cutOff = settled?.kind === "decided" ? undefined : settled;
  if (settled?.kind === "decided") {
    result = { ...result, ok: true, aborted: false, error: undefined };
  } else if (cutOff) result = cutOffResult(result, cutOff);
  turn.meter.add(result.usage);
  const call = callRecord(agent, options, result, cutOff);
  turn.callEnded(call, cutOff ? cutOffLine(options.label, result.durationMs) : undefined);
  turn.journal((journal) => journal.called(turn.start, call, turn.env.clock.now()));
  watch.ended(call);
  const before = turn.env.health.statusOf(agent.name);
  const trail = {
    lastRetryReason: events.lastRetryReason(),
    previousError: before.lastError,
    missesBefore: before.missesInRow ?? 0,
  };
  turn.env.health.record(agent.name, verdictOf(result, cutOff, trail));
  // The narrator's finish line is the call's one log line (at warn when it failed).
  tracker.finished(result, cutOff?.why);
  return result;
}

/**
 * A call's event handler: after `seen` (which says whether the event goes on), an answer-writing
 * call's text goes to the answer; each retry tells the council its upstream is failing (and more
 * than `maxUpstreamRetries` cut the call), text or activity after one that it healed.
 */
function callEvents(
  turn: TurnContext,
  agent: AgentConfig,
  options: CallOptions,
  control: CallControl,
  seen: (event: AgentEvent) => boolean,
) {
  let retries = 0;
  let lastRetryReason: string | undefined;
  const onEvent = (event: AgentEvent): void => {
    if (!seen(event)) return;
    if (options.writesAnswer) toAnswer(turn, agent, options, event);
    if (event.type === "retry") {
      lastRetryReason = event.reason ?? lastRetryReason;
      if (++retries > turn.env.config.maxUpstreamRetries) {
        const reason = event.reason ? `, last: ${oneLine(event.reason)}` : "";
        control.cut({ kind: "retries", why: `${retries} upstream retries${reason}` });
      }
      control.upstream("failing");
    } else if (event.type === "text" || event.type === "activity") control.upstream("healed");
  };
  return { onEvent, lastRetryReason: () => lastRetryReason };
}

/**
 * Agent CLIs use tools of their own and narrate before them (their runner-table entry says so);
 * model APIs and plain commands report no tool use, so their text is the answer from its first
 * token.
 */
function usesTools(agent: AgentConfig): boolean {
  return cliAdapterOf(agent.runner)?.usesTools ?? false;
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

/**
 * A cut-off call is a failure naming the cut. One cut for retrying a failing upstream is not
 * a cancellation: it counts as failed (`aborted` false).
 */
function cutOffResult(result: AgentResult, cutOff: CutOff): AgentResult {
  return {
    ...result,
    ok: false,
    aborted: cutOff.kind === "quorum",
    error: `${result.agent}: cut off after ${tenthSeconds(result.durationMs)} (${cutOff.why})`,
  };
}

/** What the call's agent went through before it ended: its upstream's last retry, its failures. */
interface UpstreamTrail {
  /** The last retry's reason as the CLI printed it. */
  lastRetryReason?: string;
  /** The reason of the agent's last failure, while its failures are in a row. */
  previousError?: string;
  /** Its calls cut off unanswered in a row before this one (without a failure). */
  missesBefore: number;
}

/** What a call tells about its agent's health, with the reason a status report should show. */
function verdictOf(
  result: AgentResult,
  cutOff: CutOff | undefined,
  trail: UpstreamTrail,
): CallVerdict {
  if (result.ok) return { kind: "ok" };
  if (!cutOff && result.aborted) return { kind: "neutral" };
  // A straggler cut while its upstream was failing showed its failure.
  if (cutOff?.kind !== "quorum" || cutOff.upstream) {
    return { kind: "failed", reason: failureReason(result, cutOff, trail) };
  }
  return stragglerVerdict(result, cutOff, trail);
}

/**
 * A straggler cut at the quorum having shown no failure. Cut without a grace (or at a grace of
 * 0, the user's "do not wait"), it tells nothing new: the others decided the turn (neutral), or
 * the council did not wait for a suspect (a miss, which gives it the longest grace next time).
 * Cut at its grace's end, it missed; that is a failure only at the longest grace there is and
 * after a miss or failure just before: it answers within no wait the council gives (a hang, or
 * slower than `quorum.maxGraceMs` allows), which cools it down at once. A shorter grace missed
 * is only a miss, even after a failure: its next grace is the longest, its fair chance.
 */
function stragglerVerdict(result: AgentResult, cutOff: CutOff, trail: UpstreamTrail): CallVerdict {
  const error = result.error ?? "cut off unanswered";
  if (!cutOff.graceMs) {
    return cutOff.suspect ? { kind: "missed", reason: error } : { kind: "neutral" };
  }
  const { previousError, missesBefore } = trail;
  if (!cutOff.longest || (previousError === undefined && missesBefore === 0)) {
    return { kind: "missed", reason: error };
  }
  // After a failure its silence is most likely more of the same: the reason stays that failure's.
  const reason = previousError ??
    `${result.agent}: unanswered within the longest grace (${tenthSeconds(cutOff.graceMs)}) ${
      missesBefore + 1
    } turns in a row: hanging, or slower than quorum.maxGraceMs allows`;
  return { kind: "failed", reason, hang: true };
}

/**
 * Why a failed call failed, in terms a user can act on: a straggler cut at the quorum says what
 * its upstream answered when it retried.
 */
function failureReason(result: AgentResult, cutOff: CutOff | undefined, trail: UpstreamTrail) {
  const error = result.error ?? "failed";
  if (cutOff?.kind === "quorum" && trail.lastRetryReason) {
    return `${error}; its upstream was failing: ${oneLine(trail.lastRetryReason)}`;
  }
  return error;
}

function callRecord(
  agent: AgentConfig,
  options: CallOptions,
  result: AgentResult,
  cutOff: CutOff | undefined,
): CallRecord {
  return {
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
    ...(cutOff && cutOff.kind !== "decided" ? { cutOff: cutOff.kind } : {}),
  };
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
