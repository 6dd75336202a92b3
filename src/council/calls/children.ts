/**
 * A turn's children, run in parallel until the quorum rule ends the wait: once enough of them
 * have usable results, the rest get a grace period (none if their last call failed) and are then
 * cut off.
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
}

/** Where one child works and what it may do there. */
export interface Placement {
  cwd?: string;
  access: ChildAccess;
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

/** Runs every child at once; returns when all have finished or been cut off. */
export async function runChildren(
  turn: TurnContext,
  children: readonly ChildPlan[],
  promptFor: (child: ChildPlan) => AgentPrompt,
  options: ChildRunOptions,
): Promise<ChildReply[]> {
  const controls = children.map(() => new CallControl(turn.signal));
  const wait = new QuorumWait(turn, children, controls, options.wait);
  try {
    return await Promise.all(children.map(async (child, i) => {
      const result = await callAgent(turn, child.agent, promptFor(child), {
        role: "child",
        label: child.label,
        model: child.model,
        ...options.place(child),
        control: controls[i],
      });
      const reply: ChildReply = {
        child,
        result,
        ...(controls[i].cutOff ? { cutOff: controls[i].cutOff } : {}),
      };
      wait.finished(i, reply);
      await options.afterEach?.(reply);
      return reply;
    }));
  } finally {
    wait.stop();
    for (const control of controls) control.dispose();
  }
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
  #timer: TimerId | undefined;
  /** The quorum came: stragglers were cut or given their grace, once. */
  #quorumMet = false;
  /** The rest were cut off: the wait is over. */
  #over = false;

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
  }

  finished(index: number, reply: ChildReply): void {
    this.#running.delete(index);
    this.#finished.push(reply);
    if (this.#over || this.#quorum === 0 || this.#running.size === 0) return;
    if (this.#turn.signal.aborted) return;
    const decided = this.#rule.decided?.(this.#finished, this.#children.length);
    if (decided) {
      this.#turn.progress(`${decided} — not waiting for ${this.#waitingOn()}`, "info");
      return this.#cutRest(decided);
    }
    if (this.#quorumMet) return;
    const usable = this.#finished.filter((r) => this.#rule.usable(r)).length;
    if (usable < this.#quorum) return;
    this.#quorumMet = true;
    const answersIn = `quorum: ${usable} of ${this.#children.length} answers in`;
    this.#cutSuspects(answersIn);
    const graced = [...this.#running].filter((i) => !this.#controls[i].cutOff)
      .map((i) => this.#children[i].label);
    if (graced.length === 0) return;
    const { graceMs } = this.#turn.env.config.quorum;
    const grace = tenthSeconds(graceMs);
    this.#turn.progress(
      `${answersIn} — ${graced.join(", ")} ${graced.length === 1 ? "gets" : "get"} ${grace} more`,
      "info",
    );
    const why = `quorum of ${this.#quorum} answers reached, ${grace} grace over`;
    this.#timer = this.#turn.env.clock.setTimeout(() => this.#cutRest(why), graceMs);
  }

  /**
   * Stragglers whose agent's last call failed get no grace: a CLI retrying a failing upstream
   * may say nothing for seconds, and after a failure its silence most likely means more of it.
   */
  #cutSuspects(answersIn: string): void {
    const suspects = [...this.#running].filter((i) =>
      this.#turn.env.health.statusOf(this.#children[i].agent.name).failuresInRow > 0
    );
    if (suspects.length === 0) return;
    const labels = suspects.map((i) => this.#children[i].label).join(", ");
    this.#turn.progress(`${answersIn} — not waiting for ${labels}: last call failed`, "info");
    const why = `quorum of ${this.#quorum} answers reached; its last call had failed`;
    for (const i of suspects) this.#controls[i].cut({ kind: "quorum", why, suspect: true });
  }

  stop(): void {
    if (this.#timer !== undefined) this.#turn.env.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #waitingOn(): string {
    return [...this.#running].map((i) => this.#children[i].label).join(", ");
  }

  #cutRest(why: string): void {
    this.stop();
    this.#over = true;
    for (const i of this.#running) this.#controls[i].cut({ kind: "quorum", why });
  }
}

export function childFailure(reply: ChildReply): Failure {
  return { label: reply.child.label, reason: failureReason(reply.result) };
}
