/**
 * The synthesizer started ahead: its process is spawned when a fanned-out turn's children start
 * (its argv and cwd are known then), so its start-up is off the critical path; it gets its prompt
 * once the candidates are in, and is discarded unused when synthesis is skipped or goes to
 * another agent.
 */
import type { AgentConfig } from "../../config/mod.ts";
import type { ChildAccess, PreparedRun } from "../../agents/types.ts";
import { cliAdapterOf } from "../../agents/cli/runners.ts";
import { turnAttachments } from "../prompt/turn_attachments.ts";
import type { RunPlan } from "../plan/plan.ts";
import type { StartedSynthesizer, TurnContext } from "../turn/context.ts";

export class EarlySynthesizer implements StartedSynthesizer {
  readonly agent: string;
  #run: Promise<PreparedRun>;
  #claimed = false;
  #discarded: Promise<void> | undefined;
  /** Starts the next likeliest synthesizer instead of this one, its discard given to await. */
  #startNext: (discarded: Promise<void>) => void;

  private constructor(
    agent: string,
    run: Promise<PreparedRun>,
    startNext: (discarded: Promise<void>) => void,
  ) {
    this.agent = agent;
    this.#run = run;
    this.#startNext = startNext;
  }

  /**
   * Starts the agent that will most likely synthesize a fanned-out turn (agent 0, or the first
   * not cooling down and without recent failures), when the runner can prepare runs; `access` is
   * what the synthesizer will be allowed in the turn's working directory.
   */
  static start(turn: TurnContext, plan: RunPlan, access: ChildAccess): void {
    if (!turn.earlySynth) EarlySynthesizer.#launch(turn, plan, access, []);
  }

  /** Starts the likeliest synthesizer but those `passedOver` (their upstream is down). */
  static #launch(
    turn: TurnContext,
    plan: RunPlan,
    access: ChildAccess,
    passedOver: readonly string[],
  ): void {
    const { runner, config, health } = turn.env;
    if (!runner || plan.kind !== "fanout" || turn.signal.aborted) return;
    // An agent whose last call failed would most likely not synthesize (synthesizers.ts): the
    // first one without failures is started instead, if there is one.
    const ready = config.defaultAgents.filter((a) =>
      !health.coolingDown(a.name) && !passedOver.includes(a.name)
    );
    const agent = ready.find((a) => health.statusOf(a.name).failuresInRow === 0) ?? ready[0];
    // Only a CLI that waits for a late prompt (its runner-table entry says so) starts ahead.
    if (!agent || !cliAdapterOf(agent.runner)?.waitsForPrompt) return;
    const run = runner.prepare(agent, {
      role: "synth",
      cwd: turn.request.cwd,
      access,
      turnId: turn.request.id,
      hostCredentials: config.passApiKeys ? turn.request.hostCredentials : undefined,
      // The synthesizer sees the turn's images and documents, as the children do.
      attachments: turnAttachments(turn.request.transcript),
      // Its prompt comes once the children are done: a CLI that gives up on a silent stdin
      // (claude, gemini) gets its primer.
      holdStdin: true,
    });
    turn.progress(`${agent.name} (synth): started ahead`, "debug");
    const startNext = (discarded: Promise<void>) => {
      // The turn's end waits for the one passed over to be gone.
      turn.windsDown(discarded);
      EarlySynthesizer.#launch(turn, plan, access, [...passedOver, agent.name]);
    };
    turn.startedAhead(new EarlySynthesizer(agent.name, run, startNext));
  }

  /**
   * `agent`'s child showed its upstream down in this turn, so it will not synthesize: when it is
   * the one started, that one is ended and the next likeliest started instead, so the fallback's
   * start-up, too, is off the critical path.
   */
  passOver(agent: string): void {
    if (this.#claimed || agent !== this.agent) return;
    this.#claimed = true;
    this.#discarded = this.#discard();
    this.#startNext(this.#discarded);
  }

  /**
   * The started run when `agent` is the one about to synthesize (once); for any other agent
   * the started one will not be used and is discarded now.
   */
  claim(agent: AgentConfig | undefined): Promise<PreparedRun> | undefined {
    if (this.#claimed) return undefined;
    this.#claimed = true;
    if (agent?.name === this.agent) return this.#run;
    this.#discarded = this.#discard();
    return undefined;
  }

  /** Ends the started process unless it was handed a prompt. Never throws. */
  async discard(): Promise<void> {
    if (!this.#claimed) {
      this.#claimed = true;
      this.#discarded = this.#discard();
    }
    await this.#discarded;
  }

  async #discard(): Promise<void> {
    await (await this.#run).discard();
  }
}
