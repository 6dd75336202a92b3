/**
 * The council's effective context window as the hosts count it: the smallest member's prompt
 * budget (`contextTokens`, or its model's default), converted from the pessimistic budget unit to
 * the unit of the gateway's own token counts (usage and count_tokens), so a transcript the host
 * sees as filling the window is exactly what fits every child.
 */
import { CHARS_PER_BUDGET_TOKEN, contextTokensOf } from "../agents/context_budget.ts";
import type { AgentConfig } from "../config/mod.ts";
import { CHARS_PER_TOKEN } from "../protocol/count_tokens.ts";

/** Tokens, as count_tokens and the reported usage count them, that fit every agent's budget. */
export function councilContextTokens(agents: readonly AgentConfig[]): number | undefined {
  if (agents.length === 0) return undefined;
  const smallest = Math.min(...agents.map((agent) => contextTokensOf(agent)));
  return Math.floor(smallest * CHARS_PER_BUDGET_TOKEN / CHARS_PER_TOKEN);
}
