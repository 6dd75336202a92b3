/**
 * The gateway's live status, kept by observing the council: turns running now with each call's
 * state, the last finished turns, per-agent figures with their health, and spend since start.
 */
import type { Clock } from "../base/clock.ts";
import type { AgentEvent } from "../agents/types.ts";
import type {
  CallObserver,
  CallStart,
  LiveTurnStart,
  SynthesisChoice,
  TurnObserver,
} from "../council/observer.ts";
import type { CallRecord, TurnDecision, TurnRecord } from "../council/records.ts";
import { oneLine } from "../base/text.ts";
import { AgentTally } from "./agent_figures.ts";
import { anyCooling, withHealth } from "./agent_health.ts";
import { SpendSeries } from "./spend.ts";
import type {
  AgentHealthReading,
  CallState,
  CallStatus,
  LiveTurn,
  RecentTurn,
  SessionStatus,
  StatusDocument,
} from "./types.ts";
import { SeatRecords } from "./seat_records.ts";
import { readSeatRecords } from "../ledger/records_file.ts";
import { resolve } from "node:path";
import type { SeatWindow } from "../ledger/seats.ts";
import type { ResolvedCall } from "../council/action/outcome_signals.ts";

/** Finished turns kept for the status document. */
export const RECENT_TURNS = 50;
/** Sessions remembered for the status line (least recently active forgotten first). */
const SESSIONS_KEPT = 1000;
/** Activity lines are cut to this length. */
const MAX_ACTIVITY = 120;

interface TrackedCall {
  start: CallStart;
  inputTokens: number;
  outputTokens: number;
  reported: boolean;
  textChars: number;
  activity?: string;
  ended?: CallRecord;
}

interface TrackedTurn {
  start: LiveTurnStart;
  decision?: TurnDecision;
  calls: TrackedCall[];
}

interface SessionState {
  turns: number;
  usd: number;
  last: RecentTurn;
}

/** What the document says about the gateway itself. */
export interface GatewayInfo {
  version: string;
  startedAt: number;
  configPath: string | null;
}

function stateOf(call: CallRecord): CallState {
  if (call.ok) return "done";
  if (call.timedOut) return "timed-out";
  return call.aborted ? "cancelled" : "failed";
}

function endedCall(call: CallRecord, model?: string): CallStatus {
  const { inputTokens, outputTokens, costUsd, estimated } = call.usage;
  return {
    label: call.label,
    agent: call.agent,
    role: call.role,
    model: model ?? call.model,
    state: stateOf(call),
    elapsedMs: call.durationMs,
    inputTokens,
    outputTokens,
    tokens: inputTokens + outputTokens,
    costUsd,
    estimated,
  };
}

function callStatus(call: TrackedCall, now: number): CallStatus {
  if (call.ended) return endedCall(call.ended, call.ended.model || call.start.model);
  const tokens = call.reported
    ? call.inputTokens + call.outputTokens
    : Math.ceil(call.textChars / 4);
  return {
    label: call.start.label,
    agent: call.start.agent,
    role: call.start.role,
    model: call.start.model,
    state: "running",
    elapsedMs: Math.max(0, now - call.start.startedAt),
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    tokens,
    costUsd: 0,
    estimated: !call.reported,
    ...(call.activity ? { activity: call.activity } : {}),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

export class StatusStore implements TurnObserver {
  #clock: Clock;
  #live = new Map<string, TrackedTurn>();
  #recent: RecentTurn[] = [];
  #agents = new AgentTally();
  #spend = new SpendSeries();
  #sessions = new Map<string, SessionState>();
  #listeners = new Set<() => void>();
  #health: () => readonly AgentHealthReading[] = () => [];
  #seats = new SeatRecords();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Makes configured agents appear in the figures before their first call. */
  knowAgents(names: readonly string[]): void {
    for (const name of names) this.#agents.know(name);
    this.#changed();
  }

  /**
   * Where agents' health is read from (the serving council's; a reload brings a new one). Until
   * this is called every agent reads as healthy.
   */
  readHealthFrom(source: () => readonly AgentHealthReading[]): void {
    this.#health = source;
    this.#changed();
  }

  /** Whether the document changes with time alone: a turn runs, or an agent cools down. */
  moving(): boolean {
    return this.#live.size > 0 || anyCooling(this.#readings(), this.#clock.now());
  }

  turnStarted(turn: LiveTurnStart): void {
    this.#live.set(turn.turnId, { start: turn, calls: [] });
    this.#changed();
  }

  turnDecided(turnId: string, decision: TurnDecision): void {
    const turn = this.#live.get(turnId);
    if (turn) turn.decision = { ...decision, agents: [...decision.agents] };
    this.#changed();
  }

  callStarted(turnId: string, start: CallStart): CallObserver {
    const call: TrackedCall = {
      start,
      inputTokens: 0,
      outputTokens: 0,
      reported: false,
      textChars: 0,
    };
    this.#live.get(turnId)?.calls.push(call);
    this.#changed();
    return {
      event: (event) => this.#callEvent(call, event),
      ended: (record) => {
        call.ended = record;
        this.#agents.called(record);
        this.#changed();
      },
    };
  }

  synthesizerChose(_turnId: string, choice: SynthesisChoice): void {
    this.#agents.chose(choice);
    this.#changed();
  }

  /** The ledger's records at start, so seats cover more than this process's turns. */
  preloadSeatsFrom(ledger: string): void {
    this.#seats.preload(readSeatRecords(resolve(ledger)));
    this.#changed();
  }

  callResolved(session: string, call: ResolvedCall, at: number): void {
    this.#seats.outcome(session, call, at);
    this.#changed();
  }

  turnEnded(record: TurnRecord): void {
    this.#seats.turn(record);
    const state = this.#live.get(record.turnId);
    this.#live.delete(record.turnId);
    const recent = this.#recentTurn(record, state);
    this.#recent.unshift(recent);
    this.#recent.length = Math.min(this.#recent.length, RECENT_TURNS);
    this.#spend.add(record.endedAt, record.usage.usd, record.calls.length);
    this.#sessions.delete(record.sessionKey);
    this.#sessions.set(record.sessionKey, {
      turns: record.sessionTurns,
      usd: record.sessionUsd,
      last: recent,
    });
    if (this.#sessions.size > SESSIONS_KEPT) {
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    }
    this.#changed();
  }

  /** Turns running now, oldest first. */
  live(): LiveTurn[] {
    const now = this.#clock.now();
    return [...this.#live.values()].map((turn) => this.#liveTurn(turn, now));
  }

  /** One session: its live turn (the latest, if several), last finished turn and totals. */
  session(key: string): SessionStatus | null {
    const live = this.live().filter((turn) => turn.session === key).at(-1) ?? null;
    const known = this.#sessions.get(key);
    if (!known && !live) return null;
    return {
      session: key,
      turns: (known?.turns ?? 0) + (live ? 1 : 0),
      usd: (known?.usd ?? 0) + (live?.usd ?? 0),
      live,
      last: known?.last ?? null,
    };
  }

  /**
   * The whole status document; with `sessionKey`, also that session's view; agents' seats over
   * `window`.
   */
  document(info: GatewayInfo, sessionKey?: string, window: SeatWindow = "all"): StatusDocument {
    const now = this.#clock.now();
    return {
      version: info.version,
      now: iso(now),
      startedAt: iso(info.startedAt),
      uptimeMs: Math.max(0, now - info.startedAt),
      configPath: info.configPath,
      live: this.live(),
      recent: [...this.#recent],
      agents: this.#agentFigures(now, window),
      spend: this.#spend.figures(now),
      ...(sessionKey === undefined ? {} : { session: this.session(sessionKey) }),
    };
  }

  #agentFigures(now: number, window: SeatWindow) {
    const readings = this.#readings();
    for (const reading of readings) this.#agents.know(reading.agent);
    const figures = withHealth(this.#agents.figures(), readings, now);
    const seats = this.#seats.figures(window, now, figures.map((f) => f.agent));
    return figures.map((figure) => ({ ...figure, seat: seats.get(figure.agent) }));
  }

  /** The council's readings; a source that fails reads as no news (every agent healthy). */
  #readings(): readonly AgentHealthReading[] {
    try {
      return this.#health();
    } catch {
      return [];
    }
  }

  #callEvent(call: TrackedCall, event: AgentEvent): void {
    switch (event.type) {
      case "usage":
        call.inputTokens = event.inputTokens;
        call.outputTokens = event.outputTokens;
        call.reported = true;
        break;
      case "text":
        call.textChars += event.text.length;
        break;
      case "activity":
        call.activity = oneLine(event.text).slice(0, MAX_ACTIVITY);
        break;
      default:
        return;
    }
    this.#changed();
  }

  #liveTurn(turn: TrackedTurn, now: number): LiveTurn {
    const calls = turn.calls.map((call) => callStatus(call, now));
    return {
      ...this.#base(turn.start, turn.decision, calls),
      elapsedMs: Math.max(0, now - turn.start.startedAt),
      usd: calls.reduce((sum, call) => sum + call.costUsd, 0),
    };
  }

  #base(start: LiveTurnStart, decision: TurnDecision | undefined, calls: CallStatus[]) {
    return {
      turn: start.turnId,
      session: start.sessionKey,
      model: start.model,
      kind: start.kind,
      continuation: start.continuation,
      startedAt: iso(start.startedAt),
      ...(decision ? { decision } : {}),
      calls,
    };
  }

  #recentTurn(record: TurnRecord, state: TrackedTurn | undefined): RecentTurn {
    const start: LiveTurnStart = state?.start ?? {
      turnId: record.turnId,
      sessionKey: record.sessionKey,
      model: "",
      kind: "answer",
      continuation: false,
      startedAt: record.endedAt - record.usage.wallMs,
    };
    const calls = record.calls.map((call) => endedCall(call));
    return {
      ...this.#base(start, { ...record.decision, agents: [...record.decision.agents] }, calls),
      endedAt: iso(record.endedAt),
      wallMs: record.usage.wallMs,
      outcome: record.outcomeKind,
      failed: record.failed,
      cancelled: record.cancelled,
      counted: record.counted,
      usd: record.usage.usd,
      inputTokens: record.usage.inputTokens,
      outputTokens: record.usage.outputTokens,
    };
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch {
        // A reader's failure is its own; the council's notifications go on.
      }
    }
  }
}
