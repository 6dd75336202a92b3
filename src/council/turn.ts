/**
 * Runs one council turn: session check, plan (judge if asked), children in parallel, synthesis
 * or selection, and the live stream of progress lines, answer deltas and the final outcome.
 */
import { getLogger, type Logger } from "@logtape/logtape";
import { type Clock, systemClock } from "../clock.ts";
import type { AgentConfig, Config } from "../config.ts";
import type { AgentResult, AgentRole, AgentUsage, RunAgent } from "../agents/types.ts";
import {
  type Ballot,
  describeProposal,
  mostProposed,
  parseChoice,
  readReply,
  resolveChoice,
  tally,
  ToolChecker,
} from "./actions.ts";
import { AnswerWriter } from "./answer.ts";
import { TurnMeter } from "./cost.ts";
import { askJudge } from "./judge.ts";
import {
  allFailedNotice,
  CANCELLED_NOTICE,
  capNotice,
  type Failure,
  failureReason,
  NO_AGENTS_NOTICE,
} from "./notices.ts";
import { type ChildPlan, judgeAgent, planTurn, resolveVerdict, type RunPlan } from "./plan.ts";
import { type LineLevel, Narrator, oneLine, recapLine } from "./progress.ts";
import { actionPrompt, answerPrompt, selectionPrompt, synthesisPrompt } from "./prompts.ts";
import { AsyncQueue } from "./queue.ts";
import { sessionCap, SessionStore } from "./session.ts";
import type { Outcome, RunTurn, TurnEvent, TurnRequest, TurnUsage } from "./types.ts";

export interface CouncilDeps {
  config: Readonly<Config>;
  runAgent: RunAgent;
  clock?: Clock;
  /** Random numbers in [0, 1) for shuffling candidates; injectable for deterministic tests. */
  random?: () => number;
  /** Session counters; pass one to pre-fill it (e.g. from a ledger). Default: a fresh store. */
  sessions?: SessionStore;
  /** Called once per turn after its spend is booked (e.g. to append to a ledger). */
  onTurnEnd?: (record: TurnRecord) => void;
}

/** What the turn decided before running agents: how many, which, and why. */
export interface TurnDecision {
  /**
   * `single` / `fanout`: a council ran; `capped`: the session was at a cap; `no-agents`: none
   * configured; `unplanned`: the turn broke before planning finished.
   */
  kind: "single" | "fanout" | "capped" | "no-agents" | "unplanned";
  reason: string;
  /** Labels of the children consulted (empty when none ran). */
  agents: string[];
}

/** One agent call of a turn (judge, child or synthesizer), as it ended. */
export interface CallRecord {
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
}

export interface Council {
  runTurn: RunTurn;
  /** The live session store (turns and spend per session key). */
  sessions: SessionStore;
}

interface TurnEnv {
  config: Readonly<Config>;
  runAgent: RunAgent;
  clock: Clock;
  random: () => number;
  sessions: SessionStore;
  onTurnEnd?: (record: TurnRecord) => void;
}

const logger = getLogger(["council-gateway", "council"]);

export function createCouncil(deps: CouncilDeps): Council {
  const env: TurnEnv = {
    config: deps.config,
    runAgent: deps.runAgent,
    clock: deps.clock ?? systemClock,
    random: deps.random ?? Math.random,
    sessions: deps.sessions ?? new SessionStore(deps.config.sessionCapacity),
    onTurnEnd: deps.onTurnEnd,
  };
  return { sessions: env.sessions, runTurn: (request, signal) => turnEvents(env, request, signal) };
}

/**
 * The turn as an event stream. The turn runs concurrently and pushes into a queue that this
 * generator drains, so children work in parallel while their events flow out live. If the
 * consumer stops early, every child is aborted and awaited before the generator returns.
 */
async function* turnEvents(
  env: TurnEnv,
  request: TurnRequest,
  signal: AbortSignal,
): AsyncGenerator<TurnEvent> {
  const queue = new AsyncQueue<TurnEvent>();
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (signal.aborted) abort();
  else signal.addEventListener("abort", abort, { once: true });
  const turn = new Turn(env, request, controller.signal, (event) => queue.push(event));
  const running = turn.run().finally(() => queue.close());
  try {
    yield* queue;
  } finally {
    controller.abort();
    signal.removeEventListener("abort", abort);
    await running;
  }
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

interface CallOptions {
  role: AgentRole;
  label: string;
  model?: string;
  /** Receives the call's text deltas (the answer stream); such text never goes to progress. */
  onText?: (text: string) => void;
}

/** One child's reply, with the plan that produced it. */
interface ChildReply {
  child: ChildPlan;
  result: AgentResult;
}

class Turn {
  #env: TurnEnv;
  #request: TurnRequest;
  #signal: AbortSignal;
  #emit: (event: TurnEvent) => void;
  #log: Logger;
  #meter = new TurnMeter();
  #narrator: Narrator;
  #startedAt: number;
  /** Children's labels, for the recap. */
  #consulted: string[] = [];
  #answerStarted = false;
  #answer: AnswerWriter;
  #done = false;
  /** Set when no agent produced anything (the protocol may report the turn as failed). */
  #failed = false;
  /** For `onTurnEnd`: the decision, whether the turn counted, and every call's result. */
  #decision: TurnDecision = { kind: "unplanned", reason: "not planned", agents: [] };
  #counted = false;
  #calls: CallRecord[] = [];

  constructor(
    env: TurnEnv,
    request: TurnRequest,
    signal: AbortSignal,
    emit: (event: TurnEvent) => void,
  ) {
    this.#env = env;
    this.#request = request;
    this.#signal = signal;
    this.#emit = emit;
    this.#log = logger.with({ turn: request.id });
    this.#startedAt = env.clock.now();
    this.#narrator = new Narrator({
      clock: env.clock,
      telemetryMs: env.config.telemetryMs,
      heartbeatMs: env.config.heartbeatMs,
      interleaved: env.config.progressDetail === "interleaved",
      emit: (line, level) => this.#progress(line, level),
    });
    this.#answer = new AnswerWriter(
      () => this.#beginAnswer(),
      (text) => this.#emit({ type: "answer_delta", text }),
    );
  }

  /** Runs the turn to its single `done`. Never rejects. */
  async run(): Promise<void> {
    try {
      await this.#run();
    } catch (err) {
      // A bug of ours must still end the turn with an answer, never a hang or a 500.
      this.#log.error("turn failed unexpectedly: {error}", { error: String(err) });
      const note = `The council gateway hit an internal error: ${oneLine(String(err))}`;
      if (this.#answer.started) this.#answer.write(`\n\n(${note})`);
      this.#finish({ kind: "answer", text: this.#answer.started ? this.#answer.text : note });
    }
  }

  async #run(): Promise<void> {
    const { config, sessions } = this.#env;
    const request = this.#request;
    this.#log.info(
      "turn start: model={model} tools={tools} continuation={continuation} session={session}",
      {
        model: request.model,
        tools: request.tools.length,
        continuation: request.continuation,
        session: request.sessionKey.slice(0, 12),
        cwd: request.cwd ?? "(temp dir)",
      },
    );
    this.#log.debug("ask: {ask}", { ask: request.ask });
    if (request.cwdNote) this.#progress(request.cwdNote, "info");
    if (config.defaultAgents.length === 0) {
      this.#log.warn("no agents configured");
      this.#failed = true;
      this.#decision = { kind: "no-agents", reason: "no agents configured", agents: [] };
      return this.#finish({ kind: "answer", text: NO_AGENTS_NOTICE });
    }
    const cap = sessionCap(sessions.touch(request.sessionKey), config);
    if (cap) {
      this.#decision = { kind: "capped", reason: `session at its ${cap.kind} cap`, agents: [] };
      this.#progress(
        cap.kind === "turns"
          ? `session at its turn cap (${cap.turns}/${cap.maxTurns}) — no council run`
          : `session at its spend cap ($${
            cap.usd.toFixed(4)
          } of $${cap.maxSessionUsd}) — no council run`,
        "info",
      );
      return this.#finish({ kind: "answer", text: capNotice(cap) });
    }
    sessions.startTurn(request.sessionKey);
    this.#counted = true;
    this.#narrator.start();
    let outcome: Outcome;
    try {
      const plan = await this.#plan();
      if (this.#signal.aborted) outcome = this.#cancelled();
      else if (request.tools.length > 0) outcome = await this.#actionTurn(plan);
      else outcome = await this.#answerTurn(plan);
    } finally {
      this.#narrator.stop();
    }
    this.#finish(outcome);
  }

  // ---- planning ------------------------------------------------------------------------

  async #plan(): Promise<RunPlan> {
    const { config } = this.#env;
    const request = this.#request;
    const first = planTurn(request, config);
    let plan: RunPlan;
    if (first.kind === "judge") {
      const judge = judgeAgent(config.defaultAgents, config.judge);
      this.#progress(`asking the fan-out judge (${judge.model}) — ${first.reason}`, "debug");
      const heard = await askJudge(
        (agent, prompt) => this.#call(agent, prompt, { role: "judge", label: "judge" }),
        judge,
        request.ask,
        first.bar,
        { tools: request.tools.length > 0, continuation: request.continuation },
      );
      plan = "verdict" in heard
        ? resolveVerdict(heard.verdict, config)
        : resolveVerdict(undefined, config, heard.failure);
    } else {
      plan = first;
    }
    const children = plan.kind === "single" ? [plan.child] : plan.children;
    this.#consulted = children.map((c) => c.label);
    this.#decision = { kind: plan.kind, reason: plan.reason, agents: [...this.#consulted] };
    const who = plan.kind === "single"
      ? `one agent: ${plan.child.label}${plan.child.model ? ` (${plan.child.model})` : ""}`
      : `${children.length} agents: ${this.#consulted.join(", ")}`;
    this.#progress(`consulting ${who} — ${plan.reason}`, "info");
    return plan;
  }

  // ---- answer turns --------------------------------------------------------------------

  async #answerTurn(plan: RunPlan): Promise<Outcome> {
    const conversation = this.#request;
    if (plan.kind === "single") {
      const { child } = plan;
      const result = await this.#call(child.agent, answerPrompt(conversation, child.directive), {
        role: "child",
        label: child.label,
        model: child.model,
        onText: (text) => this.#answer.write(text),
      });
      if (result.ok && (result.text.trim() || this.#answer.segment.trim())) {
        this.#answer.complete(result.text);
        return { kind: "answer", text: this.#answer.text };
      }
      if (this.#signal.aborted) return this.#cancelled();
      const failure = { label: child.label, reason: failureReason(result) };
      if (!this.#answer.started) return this.#allFailed([failure]);
      this.#answer.write(`\n\n(${child.label} stopped before finishing: ${failure.reason})`);
      return { kind: "answer", text: this.#answer.text };
    }

    const replies = await this.#runChildren(
      plan.children,
      (child) => answerPrompt(conversation, child.directive),
    );
    if (this.#signal.aborted) return this.#cancelled();
    const candidates = replies.filter((r) => r.result.ok && r.result.text.trim());
    if (candidates.length === 0) return this.#allFailed(replies.map(childFailure));
    // Even a lone surviving candidate goes through the synthesizer: on a fanned-out turn only
    // the synthesizer writes the answer (SPEC §6.5), and it can still check and fix that draft.
    return await this.#synthesize(candidates, replies);
  }

  /** Agent 0 synthesizes; on failure the next agent that answered does; else the best candidate. */
  async #synthesize(candidates: ChildReply[], replies: ChildReply[]): Promise<Outcome> {
    const shuffled = shuffle(candidates, this.#env.random);
    const prompt = synthesisPrompt(this.#request, shuffled.map((c) => c.result.text));
    const synthesizers = this.#synthesizerOrder(replies);
    const failures: Failure[] = [];
    for (const [k, agent] of synthesizers.entries()) {
      this.#progress(
        `${agent.name} synthesizes ${candidates.length} anonymised candidates`,
        "info",
      );
      this.#answer.newSegment();
      const result = await this.#call(agent, prompt, {
        role: "synth",
        label: `${agent.name} (synth)`,
        onText: (text) => this.#answer.write(text),
      });
      if (result.ok && (result.text.trim() || this.#answer.segment.trim())) {
        this.#answer.complete(result.text);
        return { kind: "answer", text: this.#answer.text };
      }
      if (this.#signal.aborted) return this.#cancelled();
      failures.push({ label: agent.name, reason: failureReason(result) });
      const next = synthesizers[k + 1];
      if (this.#answer.segment && next) {
        this.#answer.write(
          `\n\n---\n(${agent.name} stopped while writing this answer; ${next.name} writes it ` +
            `again below.)\n\n`,
        );
      }
    }
    const best = candidates[0];
    const why = failures.map((f) => `${f.label}: ${oneLine(f.reason)}`).join("; ");
    this.#progress(`no synthesizer succeeded — returning ${best.child.label}'s answer`, "info");
    this.#answer.write(
      `${this.#answer.started ? "\n\n---\n" : ""}${best.result.text}\n\n` +
        `(Note: the council could not combine its answers (${why}); this is ` +
        `${best.child.label}'s answer unchanged.)`,
    );
    return { kind: "answer", text: this.#answer.text };
  }

  /**
   * Agent 0 always synthesizes first (SPEC §1.1.9); fallbacks are the other agents in
   * configured order, skipping those whose every child failed (they would most likely fail
   * again, and a timed-out agent would hold the turn for another time-out).
   */
  #synthesizerOrder(replies: ChildReply[]): AgentConfig[] {
    const agents = this.#env.config.defaultAgents;
    const answered = new Set(replies.filter((r) => r.result.ok).map((r) => r.child.agentIndex));
    return agents.filter((_, i) => i === 0 || answered.has(i));
  }

  // ---- action turns --------------------------------------------------------------------

  async #actionTurn(plan: RunPlan): Promise<Outcome> {
    const request = this.#request;
    const children = plan.kind === "single" ? [plan.child] : plan.children;
    const replies = await this.#runChildren(
      children,
      (child) => actionPrompt(request, request.tools, child.directive),
    );
    if (this.#signal.aborted) return this.#cancelled();

    const checker = new ToolChecker(request.tools);
    const ballots: Ballot[] = [];
    const prose: ChildReply[] = [];
    const failures: Failure[] = [];
    for (const reply of replies) {
      const { child, result } = reply;
      if (!result.ok || !result.text.trim()) {
        failures.push(childFailure(reply));
        continue;
      }
      const reading = readReply(result.text, checker);
      if (reading.kind === "dropped") {
        this.#progress(`${child.label}: ${reading.reason}`, "info");
        failures.push({ label: child.label, reason: reading.reason });
        if (reading.prose) prose.push(reply);
        continue;
      }
      const { proposal } = reading;
      this.#progress(`${child.label} proposes ${describeProposal(proposal)}`, "info");
      ballots.push({ child: child.index, proposal });
    }

    if (ballots.length === 0) {
      if (prose.length > 0) {
        // Tolerance: a child that ignored the format but replied in prose still answered.
        this.#progress(
          `no valid action — ${prose[0].child.label}'s reply becomes the answer`,
          "info",
        );
        return { kind: "answer", text: prose[0].result.text.trim() };
      }
      return this.#allFailed(failures);
    }
    const groups = tally(ballots);
    if (groups.length === 1) {
      const { first, votes } = groups[0];
      this.#progress(
        `${votes === 1 ? "one valid proposal" : `unanimous (${votes} agents)`}: ` +
          `${describeProposal(first.proposal)} — synthesis skipped`,
        "info",
      );
      return first.proposal;
    }
    return await this.#select(ballots, replies, children.length);
  }

  /** The synthesizer picks a proposal by number (copied verbatim) or writes an answer. */
  async #select(ballots: Ballot[], replies: ChildReply[], childCount: number): Promise<Outcome> {
    const request = this.#request;
    const groups = tally(ballots);
    const prompt = selectionPrompt(
      request,
      request.tools,
      groups.map((g) => ({ proposal: g.first.proposal, votes: g.votes })),
      childCount,
    );
    for (const agent of this.#synthesizerOrder(replies)) {
      this.#progress(`${agent.name} chooses among ${groups.length} proposals`, "info");
      const result = await this.#call(agent, prompt, {
        role: "synth",
        label: `${agent.name} (synth)`,
      });
      if (this.#signal.aborted) return this.#cancelled();
      if (!result.ok) continue;
      const chosen = resolveChoice(parseChoice(result.text), groups);
      if (chosen) {
        this.#progress(`${agent.name} chose ${chosen.describe}`, "info");
        return chosen.proposal;
      }
      this.#progress(`${agent.name}'s choice is unusable`, "info");
      break;
    }
    const fallback = mostProposed(ballots)!;
    this.#progress(
      `falling back to the most-proposed action: ${describeProposal(fallback.proposal)}`,
      "info",
    );
    return fallback.proposal;
  }

  // ---- agent calls ---------------------------------------------------------------------

  #runChildren(
    children: readonly ChildPlan[],
    promptFor: (child: ChildPlan) => string,
  ): Promise<ChildReply[]> {
    return Promise.all(children.map(async (child) => ({
      child,
      result: await this.#call(child.agent, promptFor(child), {
        role: "child",
        label: child.label,
        model: child.model,
      }),
    })));
  }

  /** One metered, narrated agent call. Never throws. */
  async #call(agent: AgentConfig, prompt: string, options: CallOptions): Promise<AgentResult> {
    const { config, runAgent } = this.#env;
    this.#meter.called();
    const tracker = this.#narrator.track(
      options.label,
      options.onText === undefined && options.role !== "judge",
    );
    let result: AgentResult;
    try {
      result = await runAgent(agent, prompt, {
        role: options.role,
        cwd: this.#request.cwd,
        model: options.model,
        signal: this.#signal,
        turnId: this.#request.id,
        hostCredentials: config.passApiKeys ? this.#request.hostCredentials : undefined,
        onEvent: (event) => {
          tracker.onEvent(event);
          if (event.type === "text" && options.onText) options.onText(event.text);
        },
      });
    } catch (err) {
      result = thrownResult(agent, options, err);
    }
    this.#meter.add(result.usage);
    this.#calls.push({
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
    });
    tracker.finished(result);
    if (!result.ok && !result.aborted) {
      this.#log.warn("{label} failed: {error}", {
        label: options.label,
        error: result.error ?? "(no message)",
        exitCode: result.exitCode,
        timedOut: result.timedOut,
      });
    }
    return result;
  }

  // ---- output --------------------------------------------------------------------------

  /** A progress line: logged, and sent until the answer starts (the channel is then closed). */
  #progress(line: string, level: LineLevel): void {
    const text = oneLine(line);
    this.#log[level]("{line}", { line: text });
    if (!this.#answerStarted && !this.#done) this.#emit({ type: "progress", text });
  }

  #recap(): string {
    const wallMs = this.#env.clock.now() - this.#startedAt;
    return recapLine(this.#consulted, wallMs, this.#meter.calls, this.#meter.usd);
  }

  /** The answer's first delta is next: close progress with the recap so far. */
  #beginAnswer(): void {
    // The progress channel closes now, while the answering call still runs: its cost is not
    // known yet, so this recap says "so far" (the log's closing recap has the final figures).
    const recap = `${this.#recap()} so far · writing the answer`;
    this.#emit({ type: "progress", text: recap });
    this.#answerStarted = true;
  }

  /** No agent produced anything: a normal answer naming each failure, flagged as failed. */
  #allFailed(failures: readonly Failure[]): Outcome {
    this.#failed = true;
    return { kind: "answer", text: allFailedNotice(failures) };
  }

  #cancelled(): Outcome {
    this.#log.info("turn cancelled");
    return { kind: "answer", text: this.#answer.started ? this.#answer.text : CANCELLED_NOTICE };
  }

  #finish(outcome: Outcome): void {
    if (this.#done) return;
    const { sessions } = this.#env;
    const key = this.#request.sessionKey;
    const wallMs = this.#env.clock.now() - this.#startedAt;
    const usage = this.#meter.usage(wallMs);
    if (this.#meter.calls > 0) {
      const recap = this.#recap();
      this.#log.info("{recap}", {
        recap,
        ...usage,
        usd: roundUsd(usage.usd),
        estimated: this.#meter.estimated,
      });
      if (!this.#answerStarted) this.#emit({ type: "progress", text: recap });
    }
    const sessionUsd = sessions.addSpend(key, usage.usd);
    const sessionTurns = sessions.peek(key)?.turns ?? 0;
    this.#log.info("session turns={turns} sessionUsd={sessionUsd}", {
      turns: sessionTurns,
      sessionUsd: roundUsd(sessionUsd),
      session: key.slice(0, 12),
    });
    this.#done = true;
    this.#log.info("turn done: {kind}", {
      kind: outcome.kind === "tool" ? `tool ${outcome.name}` : "answer",
    });
    try {
      this.#env.onTurnEnd?.({
        turnId: this.#request.id,
        sessionKey: key,
        usage,
        sessionTurns,
        sessionUsd,
        outcomeKind: outcome.kind,
        endedAt: this.#env.clock.now(),
        counted: this.#counted,
        decision: this.#decision,
        calls: this.#calls,
        failed: this.#failed,
        cancelled: this.#signal.aborted,
      });
    } catch (err) {
      this.#log.warn("onTurnEnd failed: {error}", { error: String(err) });
    }
    this.#emit({ type: "done", outcome, usage, ...(this.#failed ? { failed: true } : {}) });
  }
}

/** Dollars to a millionth of a cent at most, so log lines do not show float noise. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}

function childFailure(reply: ChildReply): Failure {
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
