/**
 * Runs council turns: each one as a live event stream, from the session check through planning
 * to the answer or action step and the single `done`.
 */
import { getLogger } from "@logtape/logtape";
import { type Clock, systemClock } from "../../base/clock.ts";
import type { Config } from "../../config/mod.ts";
import type { AgentRunner, RunAgent } from "../../agents/types.ts";
import type { Isolator } from "../../workspace/isolation.ts";
import { actionTurn } from "../action/action_turn.ts";
import { answerTurn } from "../answer/answer_turn.ts";
import { admitTurn } from "./admission.ts";
import { AgentHealth, type AgentHealthStatus } from "../calls/health.ts";
import { type GraceSettings, Lateness, type LatenessStore } from "../calls/lateness.ts";
import type { TurnJournal } from "../journal.ts";
import { NO_AGENTS_NOTICE } from "./notices.ts";
import { oneLine } from "../../base/text.ts";
import { AsyncQueue } from "../../base/async_queue.ts";
import type { TurnRecord } from "../records.ts";
import { redactedEvents } from "./redacted.ts";
import { type Sessions, SessionStore } from "../session.ts";
import { TurnContext, type TurnEnv } from "./context.ts";
import { finishTurn } from "./end.ts";
import { resolvedCalls } from "../action/outcome_signals.ts";
import { guardObserver, NO_OBSERVER, type TurnObserver } from "../observer.ts";
import { planStep } from "./planning.ts";
import type { Outcome, RunTurn, TurnEvent, TurnRequest } from "../types.ts";

export type { CallRecord, TurnDecision, TurnRecord } from "../records.ts";
export type { AgentHealthStatus } from "../calls/health.ts";

const logger = getLogger(["council-gateway", "council"]);

interface CouncilDeps {
  config: Readonly<Config>;
  /** With `prepare` (an `AgentRunner`), the synthesizer is started as the children start. */
  runAgent: RunAgent | AgentRunner;
  clock?: Clock;
  /** Random numbers in [0, 1) for shuffling candidates; injectable for deterministic tests. */
  random?: () => number;
  /** Session counters; pass one to pre-fill it (e.g. from a ledger). Default: a fresh store. */
  sessions?: Sessions;
  /** Called once per turn after its spend is booked. */
  onTurnEnd?: (record: TurnRecord) => void;
  /** Records each turn's start, calls and end as they happen (a ledger). */
  journal?: TurnJournal;
  /** Makes isolated workspaces for fanned-out answer turns (none: such children run read-only). */
  isolator?: Isolator;
  /** Told about every turn and call as it runs (live status). */
  observer?: TurnObserver;
  /** Keeps the agents' lateness behind the quorum between runs (default: learned afresh). */
  latenessStore?: LatenessStore;
}

interface Council {
  runTurn: RunTurn;
  /** The live session store (turns and spend per session key). */
  sessions: Sessions;
  /**
   * Each configured agent's health (failures in a row, cool-down), then any other agent with
   * failures on record (the judge): for `doctor` and status reports.
   */
  agentHealth(): AgentHealthStatus[];
  /** Takes over a cool-down another replica started (see AgentHealth.adopt). */
  adoptHealth(status: AgentHealthStatus): void;
}

export function createCouncil(deps: CouncilDeps): Council {
  const observer = deps.observer
    ? guardObserver(deps.observer, (error) => logger.warn("observer failed: {error}", { error }))
    : NO_OBSERVER;
  const clock = deps.clock ?? systemClock;
  const env: TurnEnv = {
    config: deps.config,
    runAgent: deps.runAgent,
    runner: "prepare" in deps.runAgent ? deps.runAgent : undefined,
    clock,
    random: deps.random ?? Math.random,
    sessions: deps.sessions ?? new SessionStore(deps.config.sessionCapacity),
    health: new AgentHealth(deps.config.health, clock),
    lateness: new Lateness(graceSettings(deps.config), deps.latenessStore),
    onTurnEnd: (record) => {
      try {
        deps.onTurnEnd?.(record);
      } finally {
        observer.turnEnded(record);
      }
    },
    journal: deps.journal,
    isolator: deps.isolator,
    observer,
  };
  const names = deps.config.defaultAgents.map((a) => a.name);
  return {
    sessions: env.sessions,
    runTurn: (request, signal) => redactedEvents(request, turnEvents(env, request, signal)),
    adoptHealth: (status) => env.health.adopt(status),
    agentHealth: () => [
      ...names.map((name) => env.health.statusOf(name)),
      ...env.health.status().filter((s) => !names.includes(s.agent)),
    ],
  };
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
  const turn = new TurnContext(env, request, controller.signal, (event) => queue.push(event));
  const running = runTurn(turn).finally(() => queue.close());
  try {
    yield* queue;
  } finally {
    controller.abort();
    signal.removeEventListener("abort", abort);
    await running;
  }
}

/** Runs the turn to its single `done`. Never rejects. */
async function runTurn(turn: TurnContext): Promise<void> {
  try {
    await runSteps(turn);
  } catch (err) {
    // A bug of ours must still end the turn with an answer, never a hang or a 500.
    turn.log.error("turn failed unexpectedly: {error}", { error: String(err) });
    const note = `The council gateway hit an internal error: ${oneLine(String(err))}`;
    if (turn.answer.started) turn.answer.write(`\n\n(${note})`);
    finishTurn(turn, { kind: "answer", text: turn.answer.started ? turn.answer.text : note });
  }
}

/**
 * Outcome signals: what the host's tool_results in this request say became of calls a council
 * chose in this session's earlier turns, recorded before this turn runs.
 */
function recordResolvedCalls(turn: TurnContext): void {
  const at = turn.env.clock.now();
  const session = turn.request.sessionKey;
  for (const call of resolvedCalls(turn.request.transcript)) {
    turn.log.info("chosen call of turn {of}: {result}", { of: call.turn, result: call.result });
    turn.journal((journal) => journal.resolved?.(session, call, at));
    turn.env.observer.callResolved?.(session, call, at);
  }
}

async function runSteps(turn: TurnContext): Promise<void> {
  const { config, sessions } = turn.env;
  const request = turn.request;
  turn.log.info(
    "turn start: model={model} tools={tools} continuation={continuation} session={session}",
    {
      model: request.model,
      tools: request.tools.length,
      continuation: request.continuation,
      session: request.sessionKey.slice(0, 12),
      cwd: request.cwd ?? "(temp dir)",
    },
  );
  turn.log.debug("ask: {ask}", { ask: request.ask });
  turn.env.observer.turnStarted({
    turnId: request.id,
    sessionKey: request.sessionKey,
    model: request.model,
    kind: request.tools.length > 0 ? "action" : "answer",
    continuation: request.continuation,
    startedAt: turn.startedAt,
  });
  recordResolvedCalls(turn);
  if (request.cwdNote) turn.progress(request.cwdNote, "info");
  if (config.defaultAgents.length === 0) {
    turn.log.warn("no agents configured");
    turn.noAgents();
    return finishTurn(turn, { kind: "answer", text: NO_AGENTS_NOTICE });
  }
  const admitted = await admitTurn({
    sessions,
    limits: config,
    journal: turn.env.journal,
    start: turn.start,
    signal: turn.signal,
    progress: (line) => turn.progress(line, "info"),
    alarm: (line) => turn.alarm(line),
    journalAlarm: (line) => turn.journalAlarm(line),
  });
  if (admitted.kind === "refused") {
    turn.decided(admitted.decision);
    return finishTurn(turn, { kind: "answer", text: admitted.text });
  }
  turn.admitted(admitted.ticket);
  turn.narrator.start();
  let outcome: Outcome;
  try {
    const plan = await planStep(turn);
    if (turn.signal.aborted) outcome = turn.cancelled();
    else if (request.tools.length > 0) outcome = await actionTurn(turn, plan);
    else outcome = await answerTurn(turn, plan);
  } finally {
    turn.narrator.stop();
    // Unused (synthesis skipped, or the turn cancelled or failed): no process is left behind.
    await turn.earlySynth?.discard();
    // Nor one that was cut off: its group has been told to end; the turn ends once it has.
    await turn.windDownAll();
  }
  finishTurn(turn, outcome);
}

/**
 * A new agent's grace is `graceMs`; none learned is longer than `maxGraceMs`, which is `graceMs`
 * unless set (and never below it).
 */
function graceSettings(config: Readonly<Config>): GraceSettings {
  const { graceMs, maxGraceMs } = config.quorum;
  return { defaultMs: graceMs, maxMs: Math.max(graceMs, maxGraceMs ?? graceMs) };
}
