/**
 * A call's own stop switch: the turn's abort ends it, and the council may cut it off early (with
 * the reason progress gives).
 */
import type { AgentResult } from "../../agents/types.ts";

/** Why the council ended a call early. */
export interface CutOff {
  /**
   * `quorum`: enough answers were in; `retries`: the child kept retrying a failing upstream;
   * `decided`: what the council needed from the call is in (a synthesizer's pick).
   */
  kind: "quorum" | "retries" | "decided";
  why: string;
  /**
   * Cut at the quorum without a grace because the agent's last call had failed and it has not
   * had its next chance yet (health.ts).
   */
  suspect?: boolean;
  /** Cut at the quorum without a grace because its upstream was failing (a retry, no output). */
  upstream?: boolean;
  /** Cut at the end of the grace it was given once the quorum was in: that grace. */
  graceMs?: number;
  /** That grace was the longest any agent gets (`quorum.maxGraceMs`). */
  longest?: boolean;
}

/** A call's own stop switch: the turn's abort ends it, and the council may cut it off. */
export class CallControl {
  #controller = new AbortController();
  #turnSignal: AbortSignal;
  #onTurnAbort = () => this.#controller.abort();
  #cutOff: CutOff | undefined;
  #upstreamFailing = false;
  #settled = false;
  #onUpstreamFailure: (() => void) | undefined;

  constructor(turnSignal: AbortSignal) {
    this.#turnSignal = turnSignal;
    if (turnSignal.aborted) this.#controller.abort();
    else turnSignal.addEventListener("abort", this.#onTurnAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The cut-off that ended the call, if one did. */
  get cutOff(): CutOff | undefined {
    return this.#cutOff;
  }

  /** The child announced an upstream failure (a retry) and has shown no output since. */
  get upstreamFailing(): boolean {
    return this.#upstreamFailing;
  }

  /** The child's upstream failed (it retries), or it healed (output came after a retry). */
  upstream(state: "failing" | "healed"): void {
    this.#upstreamFailing = state === "failing";
    if (this.#upstreamFailing) this.#onUpstreamFailure?.();
  }

  /** Tells `listener` of each upstream failure the child announces. */
  onUpstreamFailure(listener: () => void): void {
    this.#onUpstreamFailure = listener;
  }

  /** Ends the call now, unless it is already ending or has ended. */
  cut(cutOff: CutOff): void {
    // Its reply may still be on its way to the council: it ended on its own, uncut.
    if (this.#controller.signal.aborted || this.#settled) return;
    this.#cutOff = cutOff;
    this.#controller.abort();
  }

  /** A call that finished on its own before the cut took hold was not cut off. */
  settle(result: AgentResult): CutOff | undefined {
    this.#settled = true;
    if (result.ok || !result.aborted) this.#cutOff = undefined;
    return this.#cutOff;
  }

  dispose(): void {
    this.#turnSignal.removeEventListener("abort", this.#onTurnAbort);
  }
}
