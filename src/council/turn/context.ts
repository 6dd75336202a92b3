/**
 * What the steps of one turn share: its request and environment, its meters and records, and
 * its output (progress lines until the answer starts, then the answer stream).
 */
import { getLogger, type Logger } from "@logtape/logtape";
import type { Clock } from "../../base/clock.ts";
import type { AgentConfig, Config } from "../../config/mod.ts";
import type { AgentRunner, PreparedRun, RunAgent } from "../../agents/types.ts";
import type { Isolator } from "../../workspace/isolation.ts";
import { AnswerWriter } from "../answer/answer.ts";
import { TurnMeter } from "./turn_cost.ts";
import { allFailedNotice, CANCELLED_NOTICE, type Failure } from "./notices.ts";
import { type LineLevel, Narrator, recapLine, synthesisNote } from "./progress.ts";
import { oneLine } from "../../base/text.ts";
import type { TurnJournal, TurnStart } from "../journal.ts";
import type { AgentHealth } from "../calls/health.ts";
import type { Lateness } from "../calls/lateness.ts";
import type {
  CallRecord,
  TurnDecision,
  TurnRecord,
  TurnSignals,
  TurnSynthesis,
} from "../records.ts";
import type { Sessions, Ticket } from "../session.ts";
import type { TurnObserver } from "../observer.ts";
import type { Outcome, TurnEvent, TurnRequest } from "../types.ts";

/** What every turn of a council runs against. */
export interface TurnEnv {
  config: Readonly<Config>;
  runAgent: RunAgent;
  /** The runner again when it can start an agent's child before its prompt. */
  runner?: Pick<AgentRunner, "prepare">;
  clock: Clock;
  random: () => number;
  sessions: Sessions;
  /** Each agent's recent failures and cool-down, across turns. */
  health: AgentHealth;
  /** Each agent's usual lateness behind the quorum, and the grace it earns. */
  lateness: Lateness;
  onTurnEnd?: (record: TurnRecord) => void;
  journal?: TurnJournal;
  /** Makes isolated workspaces for fanned-out answer turns (none: children run read-only). */
  isolator?: Isolator;
  observer: TurnObserver;
}

const logger = getLogger(["council-gateway", "council"]);

/** A synthesizer started ahead of its prompt (early_synth.ts): claimed by the step that needs it. */
export interface StartedSynthesizer {
  /** Its prepared run when `agent` is the one started, else undefined (and it is ended). */
  claim(agent: AgentConfig | undefined): Promise<PreparedRun> | undefined;
  /** Ends it unused; settles once it is gone. */
  discard(): Promise<void>;
  /** `agent`'s upstream is down in this turn: if it is the one started, start another. */
  passOver(agent: string): void;
}

export class TurnContext {
  readonly env: TurnEnv;
  readonly request: TurnRequest;
  readonly signal: AbortSignal;
  readonly emit: (event: TurnEvent) => void;
  readonly log: Logger;
  readonly meter = new TurnMeter();
  readonly narrator: Narrator;
  readonly answer: AnswerWriter;
  readonly startedAt: number;
  #answerStarted = false;
  #done = false;
  /** Set when no agent produced anything (the protocol may report the turn as failed). */
  #failed = false;
  /** For `onTurnEnd`: the decision, whether the turn counted, and every call's result. */
  #decision: TurnDecision = { kind: "unplanned", reason: "not planned", agents: [] };
  readonly #calls: CallRecord[] = [];
  /** The session's hold on this turn's count and spend, once admitted. */
  #ticket: Ticket | undefined;
  readonly start: TurnStart;
  /** A journal failure was already shown in progress (once per turn is enough). */
  #journalAlarmed = false;
  /** `gemini cut off after 9.1s`, for the recap. */
  readonly #cutOffs: string[] = [];
  /** Children cut off or cancelled whose process groups are still ending (the turn waits). */
  readonly #windingDown: Promise<void>[] = [];
  /** Stops the calls that run on unwaited for (see `runsOn`), once the turn's outcome is ready. */
  readonly #runningOn: (() => void)[] = [];
  /** The synthesizer started as the children start, on fanned-out turns. */
  #earlySynth: StartedSynthesizer | undefined;
  /** What the deciding step records for outcome signals (the chosen call, the synthesis). */
  #signals: TurnSignals = {};

  /** Children's labels, for the recap. */
  get consulted(): readonly string[] {
    return this.#decision.agents;
  }
  get answerStarted(): boolean {
    return this.#answerStarted;
  }
  get done(): boolean {
    return this.#done;
  }
  get failed(): boolean {
    return this.#failed;
  }
  get decision(): TurnDecision {
    return this.#decision;
  }
  /** Admitted turns count toward the session's cap (not capped, refused or agentless ones). */
  get counted(): boolean {
    return this.#ticket !== undefined;
  }
  get calls(): readonly CallRecord[] {
    return this.#calls;
  }
  get ticket(): Ticket | undefined {
    return this.#ticket;
  }
  get earlySynth(): StartedSynthesizer | undefined {
    return this.#earlySynth;
  }
  get signals(): Readonly<TurnSignals> {
    return this.#signals;
  }

  /** The plan is made: these children are consulted, for this reason. */
  planned(kind: TurnDecision["kind"], reason: string, children: readonly string[]): void {
    this.#decision = { kind, reason, agents: [...children] };
  }

  /** The turn was decided before planning (capped, refused, or no agents). */
  decided(decision: TurnDecision): void {
    this.#decision = decision;
  }

  /** No agents are configured: the turn fails without running any. */
  noAgents(): void {
    this.#failed = true;
    this.#decision = { kind: "no-agents", reason: "no agents configured", agents: [] };
  }

  /** The session admitted the turn: it counts, and holds its ticket until it settles. */
  admitted(ticket: Ticket): void {
    this.#ticket = ticket;
  }

  /** A call ended; `cutOff` is its recap note when the council ended it early. */
  callEnded(call: CallRecord, cutOff?: string): void {
    this.#calls.push(call);
    if (cutOff) this.#cutOffs.push(cutOff);
  }

  /** A child's process group is still ending: the turn waits for it before it is over. */
  windsDown(ended: Promise<void>): void {
    this.#windingDown.push(ended);
  }

  /**
   * A call the council no longer waits for runs on in the background until it ends (`ended`):
   * `stop` ends it when the turn's outcome is ready (`windDownAll`), so it never outlives the turn.
   */
  runsOn(stop: () => void, ended: Promise<void>): void {
    this.#runningOn.push(stop);
    this.#windingDown.push(ended);
  }

  /**
   * Stops the calls still running on unwaited for, then settles once every child that was winding
   * down has ended, those added meanwhile too.
   */
  async windDownAll(): Promise<void> {
    for (const stop of this.#runningOn.splice(0)) stop();
    while (this.#windingDown.length > 0) await Promise.all(this.#windingDown.splice(0));
  }

  /** The synthesizer was started ahead of its prompt. */
  startedAhead(synthesizer: StartedSynthesizer): void {
    this.#earlySynth = synthesizer;
  }

  /** The deciding step's outcome signals, merged into those recorded so far. */
  noteSignals(signals: Partial<TurnSignals>): void {
    this.#signals = { ...this.#signals, ...signals };
  }

  /** The turn is over: nothing more reaches progress. */
  finished(): void {
    this.#done = true;
  }

  constructor(
    env: TurnEnv,
    request: TurnRequest,
    signal: AbortSignal,
    emit: (event: TurnEvent) => void,
  ) {
    this.env = env;
    this.request = request;
    this.signal = signal;
    this.emit = emit;
    this.log = logger.with({ turn: request.id });
    this.startedAt = env.clock.now();
    this.start = { turnId: request.id, sessionKey: request.sessionKey, startedAt: this.startedAt };
    this.narrator = new Narrator({
      clock: env.clock,
      telemetryMs: env.config.telemetryMs,
      heartbeatMs: env.config.heartbeatMs,
      interleaved: env.config.progressDetail === "interleaved",
      emit: (line, level) => this.progress(line, level),
    });
    this.answer = new AnswerWriter(
      () => this.#beginAnswer(),
      (text) => this.emit({ type: "answer_delta", text }),
    );
  }

  /** A progress line: logged, and sent until the answer starts (the channel is then closed). */
  progress(line: string, level: LineLevel): void {
    const text = oneLine(line);
    this.log[level]("{line}", { line: text });
    if (!this.#answerStarted && !this.#done) this.emit({ type: "progress", text });
  }

  /** A problem the user must see: an error in the log, and a progress line while it is open. */
  alarm(line: string): void {
    const text = oneLine(line);
    this.log.error("{line}", { line: text });
    if (!this.#answerStarted && !this.#done) this.emit({ type: "progress", text });
  }

  /** A journal failure: an alarm the first time in a turn, then only an error in the log. */
  journalAlarm(line: string): void {
    if (this.#journalAlarmed) this.log.error("{line}", { line: oneLine(line) });
    else this.alarm(line);
    this.#journalAlarmed = true;
  }

  /** Writes to the journal; a failure is shown and never stops the turn. */
  journal(write: (journal: TurnJournal) => void): void {
    const { journal } = this.env;
    if (!journal) return;
    try {
      write(journal);
    } catch (err) {
      this.journalAlarm(`${(err as Error).message} — spend is not being recorded`);
    }
  }

  /** The recap line; `soFar` while a call still runs (its cost not yet known). */
  recap(soFar = false): string {
    const wallMs = this.env.clock.now() - this.startedAt;
    const line = recapLine(this.#decision.agents, wallMs, this.meter.calls, this.meter.usd);
    const { synthesis } = this.#decision;
    return `${line}${soFar ? " so far" : ""}${this.#cutOffs.map((c) => ` · ${c}`).join("")}${
      synthesis && !soFar ? ` · ${synthesisNote(synthesis, "past")}` : ""
    }`;
  }

  /**
   * The synthesizer decided how the answer comes to be (undefined: no synthesizer's answer is
   * sent after all): for the record and the status API.
   */
  synthesized(synthesis: TurnSynthesis | undefined): void {
    const { synthesis: _, ...decision } = this.#decision;
    this.#decision = synthesis ? { ...decision, synthesis } : decision;
    this.env.observer.turnDecided(this.request.id, this.#decision);
  }

  /** No agent produced anything: a normal answer naming each failure, flagged as failed. */
  allFailed(failures: readonly Failure[]): Outcome {
    this.#failed = true;
    return { kind: "answer", text: allFailedNotice(failures) };
  }

  cancelled(): Outcome {
    this.log.info("turn cancelled");
    return { kind: "answer", text: this.answer.started ? this.answer.text : CANCELLED_NOTICE };
  }

  /** The answer's first delta is next: close progress with the recap so far. */
  #beginAnswer(): void {
    // The progress channel closes now. While the answering call still runs its cost is not
    // known yet, so the recap says "so far" (the log's closing recap has the final figures).
    const { synthesis } = this.#decision;
    const soFar = this.narrator.waitingOn().length > 0;
    // recap() carries the synthesis note once nothing runs any more.
    const closing = !synthesis
      ? " · writing the answer"
      : soFar
      ? ` · ${synthesisNote(synthesis, "now")}`
      : "";
    const recap = `${this.recap(soFar)}${closing}`;
    this.emit({ type: "progress", text: recap });
    this.#answerStarted = true;
  }
}
