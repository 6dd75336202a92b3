/**
 * Which agents may synthesize a turn, in the order they are tried.
 */
import type { AgentConfig } from "../../config/mod.ts";
import { type ChildReply, upstreamDown } from "../calls/children.ts";
import type { TurnContext } from "../turn/context.ts";

export const NO_SYNTHESIZER = "every agent that could synthesize is cooling down or failed " +
  "in this turn";

/**
 * Agent 0 synthesizes first (CONTRACT.md §1.1.9); fallbacks are the other agents in configured order
 * whose children answered and none failed (they would most likely fail again, and a timed-out
 * agent would hold the turn for another time-out). Agents cooling down never synthesize, nor
 * does agent 0 when its child was cut off retrying a failing upstream this turn (or cut at the
 * quorum while its upstream was failing), failed with its upstream failing (it retried, and
 * the retry failed too: a second call would wait out the same retries), or was cut off
 * unanswered after its last call had failed.
 */
export function synthesizerOrder(turn: TurnContext, replies: readonly ChildReply[]): AgentConfig[] {
  const agents = turn.env.config.defaultAgents;
  const answered = new Set<number>();
  const failed = new Set<number>();
  /** Agents whose child this turn showed their upstream still failing, and how. */
  const down = new Map<number, string>();
  for (const reply of replies) {
    const { child, result, cutOff } = reply;
    if (result.ok) answered.add(child.agentIndex);
    else if (cutOff?.kind !== "quorum") failed.add(child.agentIndex);
    if (upstreamDown(reply)) {
      down.set(child.agentIndex, "its upstream failed in this turn");
    } else if (cutOff?.suspect) {
      down.set(child.agentIndex, "it failed before and did not answer now");
    }
  }
  const order: AgentConfig[] = [];
  for (const [i, agent] of agents.entries()) {
    const cooling = turn.env.health.coolingDown(agent.name);
    const fit = i === 0 ? !down.has(0) : answered.has(i) && !failed.has(i);
    if (fit && !cooling) order.push(agent);
    else if (i === 0) {
      const why = cooling ? "it is cooling down" : down.get(0);
      turn.progress(`${agent.name} does not synthesize: ${why}`, "info");
    }
  }
  return order;
}
