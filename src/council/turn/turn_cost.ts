/**
 * Turn cost telemetry: agent calls made, tokens and USD summed over every call of a turn.
 */
import type { AgentUsage } from "../../agents/types.ts";
import type { TurnUsage } from "../types.ts";

export class TurnMeter {
  calls = 0;
  inputTokens = 0;
  outputTokens = 0;
  cacheReadTokens = 0;
  cacheWriteTokens = 0;
  usd = 0;
  /** True when any call's cost was estimated rather than reported. */
  estimated = false;

  /** Counts an invocation when it starts, so a recap mid-call already includes it. */
  called(): void {
    this.calls++;
  }

  /** Adds a finished call's usage. */
  add(usage: AgentUsage): void {
    this.inputTokens += usage.inputTokens;
    this.outputTokens += usage.outputTokens;
    this.cacheReadTokens += usage.cacheReadTokens ?? 0;
    this.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    this.usd += usage.costUsd;
    this.estimated ||= usage.estimated;
  }

  usage(wallMs: number): TurnUsage {
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      ...(this.cacheReadTokens ? { cacheReadTokens: this.cacheReadTokens } : {}),
      ...(this.cacheWriteTokens ? { cacheWriteTokens: this.cacheWriteTokens } : {}),
      usd: this.usd,
      calls: this.calls,
      wallMs,
    };
  }
}
