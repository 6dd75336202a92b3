/**
 * A turn's children, run in parallel until the quorum rule ends the wait: once enough of them
 * have usable results, the rest get a grace period learned from their lateness (none for a
 * suspect, health.ts, or one whose upstream is failing) and are then cut off.
 */
import type { TimerId } from "../../base/clock.ts";
import type { AgentPrompt, AgentResult, ChildAccess } from "../../agents/types.ts";
import { callAgent } from "./calls.ts";
import { CallControl, type CutOff } from "./call_control.ts";
import { type Failure, failureReason } from "../turn/notices.ts";
import type { ChildPlan } from "../plan/plan.ts";
import { tenthSeconds } from "../turn/progress.ts";
import type { TurnContext } from "../turn/context.ts";

/** One child's reply, with the plan that produced it. */
export interface ChildReply {
  child: ChildPlan;
  result: AgentResult;
  /** Set when the council cut the child off. */
  cutOff?: CutOff;
  /** Its last upstream request had failed when it ended (a retry announced, no output since). */
  upstreamFailing?: boolean;
}

/** Where one child works and what it may do there. */
export interface Placement {
  cwd?: string;
  access: ChildAccess;
  /** `cwd` is this turn's alone (see `RunOptions`). */
  scratch?: boolean;
  /** `cwd` is kept for later turns, cleaned of this turn's changes once this settles. */
  reusedAfter?: Promise<void>;
}

/** How a turn's children run: where each works, what follows each one's end, when to stop. */
interface ChildRunOptions {
  place: (child: ChildPlan) => Placement;
  /** Awaited after each child's call, before the children's joint result. */
  afterEach?: (reply: ChildReply) => Promise<void>;
  /** What counts as an answer, for the quorum. */
  wait: WaitRule;
}

/** What counts as an answer on this kind of turn. */
export interface WaitRule {
  /** Whether a finished reply counts toward the quorum. */
  usable(reply: ChildReply): boolean;
  /**
   * Whether the finished replies already decide the turn whatever the others say: the reason,
   * which ends the wait at once, or undefined.
   */
  decided?(finished: readonly ChildReply[], childCount: number): string | undefined;
}

/**
 * Runs every child at once; returns when all have finished or been cut off, or were let go at
 * the quorum to run on unwaited for (an agent on probation: its reply here says so).
 */
export async function runChildren(
  turn: TurnContext,
  children: readonly ChildPlan[],
  promptFor: (child: ChildPlan) => AgentPrompt,
  options: ChildRunOptions,
): Promise<ChildReply[]> {
  const controls = children.map(() => new CallControl(turn.signal));
  const wait = new QuorumWait(turn, children, controls, options.wait);
  try {
    return await Promise.all(children.map((child, i) => {
      const ended = runChild(turn, i, promptFor(child), controls[i], wait, options);
      const letGo = wait.letGo(i).then((reply) => {
        turn.runsOn(() => wait.stopRunningOn(i), ended.then(() => {}));
        return reply;
      });
      return Promise.race([ended, letGo]);
    }));
  } finally {
    wait.stop();
    controls.forEach((control, i) => {
      if (!wait.runsOn(i)) control.dispose();
    });
  }
}

/** One child's call, booked to the quorum; a child that ran on unwaited for ends quietly. */
async function runChild(
  turn: TurnContext,
  index: number,
  prompt: AgentPrompt,
  control: CallControl,
  wait: QuorumWait,
  options: ChildRunOptions,
): Promise<ChildReply> {
  const child = wait.child(index);
  const result = await callAgent(turn, child.agent, prompt, {
    role: "child",
    label: child.label,
    model: child.model,
    ...options.place(child),
    control,
  });
  const reply: ChildReply = {
    child,
    result,
    ...(control.cutOff ? { cutOff: control.cutOff } : {}),
    ...(control.upstreamFailing ? { upstreamFailing: true } : {}),
  };
  wait.finished(index, reply);
  if (wait.runsOn(index)) {
    // Its reply came after the turn went on without it: it only tells its health (calls.ts).
    control.dispose();
    turn.env.lateness.save();
    return reply;
  }
  if (upstreamDown(reply)) turn.earlySynth?.passOver(child.agent.name);
  await options.afterEach?.(reply);
  return reply;
}

/** The quorum rule over one turn's children. */
class QuorumWait {
  #turn: TurnContext;
  #children: readonly ChildPlan[];
  #controls: readonly CallControl[];
  #rule: WaitRule;
  /** Usable answers that start the grace period (0 = wait for every child). */
  #quorum: number;
  #finished: ChildReply[] = [];
  #running: Set<number>;
  #timers = new Map<number, TimerId>();
  /** Children cut at the end of their grace, and that grace. */
  #graceEnded = new Map<number, number>();
  /** When the quorum came (stragglers were cut or given their grace, once). */
  #quorumAt: number | undefined;
  /** The rest were cut off: the wait is over. */
  #over = false;
  /** Each child's reply for the turn when it is let go at the quorum (see `letGo`). */
  #letGo: PromiseWithResolvers<ChildReply>[];
  /** Children let go at the quorum that run on unwaited for until they end. */
  #runningOn = new Set<number>();

  constructor(
    turn: TurnContext,
    children: readonly ChildPlan[],
    controls: readonly CallControl[],
    rule: WaitRule,
  ) {
    this.#turn = turn;
    this.#children = children;
    this.#controls = controls;
    this.#rule = rule;
    const { minAnswers } = turn.env.config.quorum;
    this.#quorum = children.length > 1 ? Math.min(minAnswers, children.length) : 0;
    this.#running = new Set(children.keys());
    this.#letGo = children.map(() => Promise.withResolvers<ChildReply>());
    controls.forEach((control, i) => control.onUpstreamFailure(() => this.#upstreamFailed(i)));
  }

  finished(index: number, reply: ChildReply): void {
    this.#running.delete(index);
    this.#learn(index, reply);
    if (this.#runningOn.has(index)) return this.#clearTimer(index);
    this.#finished.push(reply);
    if (this.#over || this.#quorum === 0 || this.#running.size === 0) return;
    if (this.#turn.signal.aborted) return;
    const decided = this.#rule.decided?.(this.#finished, this.#children.length);
    if (decided) {
      this.#turn.progress(`${decided} — not waiting for ${this.#waitingOn()}`, "info");
      return this.#cutRest(decided);
    }
    if (this.#quorumAt !== undefined) return;
    const usable = this.#finished.filter((r) => this.#rule.usable(r)).length;
    if (usable < this.#quorum) return;
    this.#quorumAt = this.#turn.env.clock.now();
    // Those in before the quorum were on time.
    for (const r of this.#finished) {
      if (this.#rule.usable(r)) this.#turn.env.lateness.record(r.child.agent.name, 0);
    }
    const answersIn = `quorum: ${usable} of ${this.#children.length} answers in`;
    this.#cutSuspects(answersIn);
    this.#grace(answersIn);
  }

  /**
   * Each straggler still running gets the grace its agent's usual lateness earns: waited for,
   * or, for an agent on probation (health.ts), run on unwaited for while the turn goes on.
   */
  #grace(answersIn: string): void {
    const graced = [...this.#running].filter((i) => !this.#controls[i].cutOff);
    if (graced.length === 0) return;
    const { lateness, health, clock } = this.#turn.env;
    const longest = lateness.longestMs;
    const graces = new Map(graced.map((i) => [i, lateness.graceFor(this.#children[i].agent.name)]));
    const onProbation = graced.filter((i) => health.onProbation(this.#children[i].agent.name));
    const waited = graced.filter((i) => !onProbation.includes(i));
    const lines = [
      ...(waited.length ? [this.#givenLine(waited, graces)] : []),
      ...onProbation.map((i) =>
        `not waiting for ${this.#children[i].label} (back from a cool-down for not answering ` +
        `in time): it runs on ${tenthSeconds(graces.get(i)!)} at most, to show it keeps up`
      ),
    ];
    this.#turn.progress(`${answersIn} — ${lines.join("; ")}`, "info");
    for (const [i, graceMs] of graces) {
      const why = `quorum of ${this.#quorum} answers reached, ${tenthSeconds(graceMs)} grace over`;
      const end = () => {
        this.#graceEnded.set(i, graceMs);
        this.#cut(i, { kind: "quorum", why, graceMs, longest: graceMs >= longest });
      };
      this.#timers.set(i, clock.setTimeout(end, graceMs));
    }
    for (const i of onProbation) {
      this.#runningOn.add(i);
      this.#letGo[i].resolve(this.#letGoReply(i));
    }
  }

  /** `codex gets 3.0s more`, `codex, gemini get 3.0s more`, `codex gets 1.0s more, gemini …`. */
  #givenLine(waited: readonly number[], graces: ReadonlyMap<number, number>): string {
    const labels = waited.map((i) => this.#children[i].label);
    const given = waited.map((i) => graces.get(i)!);
    if (given.every((g) => g === given[0])) {
      return `${labels.join(", ")} ${waited.length === 1 ? "gets" : "get"} ${
        tenthSeconds(given[0])
      } more`;
    }
    return labels.map((label, k) => `${label} gets ${tenthSeconds(given[k])} more`).join(", ");
  }

  /** What the turn goes on with for a child let go at the quorum: no answer, and why. */
  #letGoReply(index: number): ChildReply {
    const child = this.#children[index];
    const why = "not waited for past the quorum: on probation after a cool-down";
    const result: AgentResult = {
      agent: child.agent.name,
      model: child.model ?? child.agent.model,
      role: "child",
      ok: false,
      text: "",
      error: `${child.label}: ${why}`,
      exitCode: null,
      timedOut: false,
      aborted: true,
      durationMs: this.#turn.env.clock.now() - this.#turn.startedAt,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
    };
    return { child, result, cutOff: { kind: "quorum", why } };
  }

  /** Settles with the child's reply for the turn if it is let go at the quorum (else never). */
  letGo(index: number): Promise<ChildReply> {
    return this.#letGo[index].promise;
  }

  /** Whether the child was let go at the quorum and runs on unwaited for. */
  runsOn(index: number): boolean {
    return this.#runningOn.has(index);
  }

  /** The turn's outcome is ready: a child still running on is cut, its chance not yet over. */
  stopRunningOn(index: number): void {
    if (!this.#running.has(index)) return;
    this.#cut(index, { kind: "quorum", why: "the turn was over before its grace" });
  }

  child(index: number): ChildPlan {
    return this.#children[index];
  }

  /** A child's lateness behind the quorum, when the quorum had come and it answered. */
  #learn(index: number, reply: ChildReply): void {
    if (this.#quorumAt === undefined || this.#turn.signal.aborted) return;
    const agent = this.#children[index].agent.name;
    const late = this.#turn.env.clock.now() - this.#quorumAt;
    if (this.#rule.usable(reply)) this.#turn.env.lateness.record(agent, late);
    // Cut at the grace's end having shown nothing: at least that late, and its next grace grows
    // (whether the miss is a failure is health's matter, calls.ts).
    else if (this.#graceEnded.has(index) && reply.cutOff) {
      this.#turn.env.lateness.missed(agent, this.#graceEnded.get(index)!);
    } else if (reply.cutOff?.suspect) this.#turn.env.lateness.cutWithoutGrace(agent);
  }

  /**
   * Suspects (their agent's last call failed, and they have not had their next chance yet) get no
   * grace: a CLI retrying a failing upstream may say nothing for seconds, and after a failure its
   * silence most likely means more of it. Nor do those whose upstream is failing right now (a
   * retry, and no output since).
   */
  #cutSuspects(answersIn: string): void {
    const running = [...this.#running];
    const failing = running.filter((i) => this.#controls[i].upstreamFailing);
    for (const i of failing) this.#cutFailing(i, answersIn);
    const suspects = running.filter((i) =>
      !failing.includes(i) && this.#turn.env.health.suspect(this.#children[i].agent.name)
    );
    if (suspects.length === 0) return;
    const labels = suspects.map((i) => this.#children[i].label).join(", ");
    this.#turn.progress(`${answersIn} — not waiting for ${labels}: last call failed`, "info");
    const why = `quorum of ${this.#quorum} answers reached; its last call had failed`;
    for (const i of suspects) this.#cut(i, { kind: "quorum", why, suspect: true });
  }

  /** A child announced an upstream failure: with the quorum in, it is not waited for. */
  #upstreamFailed(index: number): void {
    if (this.#quorumAt === undefined || this.#over || !this.#running.has(index)) return;
    const answersIn = `quorum: ${
      this.#finished.filter((r) => this.#rule.usable(r)).length
    } of ${this.#children.length} answers in`;
    this.#cutFailing(index, answersIn);
  }

  #cutFailing(index: number, answersIn: string): void {
    if (this.#controls[index].cutOff) return;
    const label = this.#children[index].label;
    this.#turn.progress(`${answersIn} — not waiting for ${label}: its upstream is failing`, "info");
    const why = `quorum of ${this.#quorum} answers reached; its upstream is failing`;
    this.#cut(index, { kind: "quorum", why, upstream: true });
  }

  /** The wait is over: grace timers end, but not those of children running on. */
  stop(): void {
    for (const index of [...this.#timers.keys()]) {
      if (!this.#runningOn.has(index)) this.#clearTimer(index);
    }
    this.#turn.env.lateness.save();
  }

  #clearTimer(index: number): void {
    const timer = this.#timers.get(index);
    if (timer !== undefined) this.#turn.env.clock.clearTimeout(timer);
    this.#timers.delete(index);
  }

  #waitingOn(): string {
    return [...this.#running].map((i) => this.#children[i].label).join(", ");
  }

  #cut(index: number, cutOff: CutOff): void {
    this.#clearTimer(index);
    this.#controls[index].cut(cutOff);
  }

  #cutRest(why: string): void {
    this.#over = true;
    for (const i of this.#running) this.#cut(i, { kind: "quorum", why });
  }
}

/**
 * Whether a child's end showed its agent's upstream down in this turn: cut off retrying it, cut
 * at the quorum while it was failing, or failed with its last retry failing too.
 */
export function upstreamDown({ result, cutOff, upstreamFailing }: ChildReply): boolean {
  return cutOff?.kind === "retries" || cutOff?.upstream === true ||
    (!result.ok && upstreamFailing === true);
}

export function childFailure(reply: ChildReply): Failure {
  return { label: reply.child.label, reason: failureReason(reply.result) };
}
