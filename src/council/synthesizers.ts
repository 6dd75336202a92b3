/**
 * Which agents may synthesize a turn, in the order they are tried.
 */
import type { AgentConfig } from "../config.ts";
import type { ChildReply } from "./calls.ts";

/**
 * Agent 0 always synthesizes first (SPEC §1.1.9); fallbacks are the other agents in
 * configured order, skipping those whose every child failed (they would most likely fail
 * again, and a timed-out agent would hold the turn for another time-out).
 */
export function synthesizerOrder(
  agents: readonly AgentConfig[],
  replies: readonly ChildReply[],
): AgentConfig[] {
  const answered = new Set(replies.filter((r) => r.result.ok).map((r) => r.child.agentIndex));
  return agents.filter((_, i) => i === 0 || answered.has(i));
}
