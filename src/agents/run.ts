/** Runs one agent (placeholder until the agents layer lands). */
import type { PriceTable, RunAgent } from "./types.ts";

export interface AgentRunnerOptions {
  /** Config `passApiKeys`: keep provider credentials in the child's environment. */
  passApiKeys: boolean;
  /** This gateway's own origins (e.g. http://127.0.0.1:6767), known once it listens. */
  selfOrigins: () => string[];
  /** Config `pricing`, merged over the built-in table. */
  pricing: PriceTable;
  /** Base environment for children; defaults to the gateway's own. */
  baseEnv?: Record<string, string>;
}

export function createAgentRunner(_options: AgentRunnerOptions): RunAgent {
  return (agent, _prompt, options) =>
    Promise.resolve({
      agent: agent.name,
      model: options.model ?? agent.model,
      role: options.role,
      ok: false,
      text: "",
      error: `${agent.name}: agents layer not implemented`,
      exitCode: null,
      timedOut: false,
      aborted: false,
      durationMs: 0,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
    });
}
