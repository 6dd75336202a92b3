/**
 * Per-agent figures since start: calls, failures, a median latency over a bounded window of
 * recent calls, how often a synthesizer chose the agent's proposal, tokens and spend.
 */
import type { CallRecord } from "../council/records.ts";
import type { SynthesisChoice } from "../council/observer.ts";
import type { AgentFigures } from "./types.ts";
import { median } from "../base/median.ts";

/** Durations kept per agent for its median: memory stays bounded on a gateway up for months. */
const LATENCY_WINDOW = 2048;

interface Tally extends Omit<AgentFigures, "medianMs" | "health"> {
  durations: number[];
  /** Next slot to overwrite once the window is full. */
  next: number;
}

export class AgentTally {
  #agents = new Map<string, Tally>();

  #of(agent: string): Tally {
    let tally = this.#agents.get(agent);
    if (!tally) {
      tally = {
        agent,
        calls: 0,
        failures: 0,
        cancelled: 0,
        candidates: 0,
        chosen: 0,
        inputTokens: 0,
        outputTokens: 0,
        usd: 0,
        durations: [],
        next: 0,
      };
      this.#agents.set(agent, tally);
    }
    return tally;
  }

  /** Makes an agent appear (with zero figures) before its first call ends. */
  know(agent: string): void {
    this.#of(agent);
  }

  called(call: CallRecord): void {
    const tally = this.#of(call.agent);
    tally.calls++;
    if (call.aborted) tally.cancelled++;
    else if (!call.ok) tally.failures++;
    tally.inputTokens += call.usage.inputTokens;
    tally.outputTokens += call.usage.outputTokens;
    tally.usd += call.usage.costUsd;
    // A cancelled call's duration says when it was stopped, not how long the agent takes.
    if (call.aborted) return;
    if (tally.durations.length < LATENCY_WINDOW) tally.durations.push(call.durationMs);
    else {
      tally.durations[tally.next] = call.durationMs;
      tally.next = (tally.next + 1) % LATENCY_WINDOW;
    }
  }

  chose(choice: SynthesisChoice): void {
    for (const agent of new Set(choice.candidates)) this.#of(agent).candidates++;
    for (const agent of new Set(choice.chosen)) this.#of(agent).chosen++;
  }

  /** Every agent seen, in the order first seen (their health is added by the store). */
  figures(): Omit<AgentFigures, "health">[] {
    return [...this.#agents.values()].map(({ durations, next: _, ...figures }) => ({
      ...figures,
      medianMs: median(durations) ?? null,
    }));
  }
}
