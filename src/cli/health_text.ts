/**
 * Agents' health from a gateway's status document as the commands print it: a short state per
 * agent (`ok`, `slow`, `failing`, `cooling down 41s`) and, for an agent that is not healthy or is
 * slow, why and until when.
 */
import type { AgentHealthView, AgentView } from "../daemon/gateway_client.ts";
import { timeLeft } from "./statusline/line.ts";

/** `14:03:07`, the machine's local time of an ISO instant. */
export function clockTime(iso: string): string {
  const date = new Date(iso);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((n) => String(n).padStart(2, "0")).join(":");
}

/** Why an agent back from a cool-down for lateness is let go at the quorum, in a few words. */
const PROBATION = "on probation: not waited for past the quorum";

/** A healthy agent whose last calls were cut off unanswered: slow, never failing for it. */
function slow(health: AgentHealthView): boolean {
  return health.state === "healthy" && (health.missesInRow ?? 0) > 0;
}

/** `ok`, `slow`, `failing`, `cooling down 41s`. */
function healthState(health: AgentHealthView): string {
  if (health.state === "cooling-down") return `cooling down ${timeLeft(health.coolingLeftMs ?? 0)}`;
  if (slow(health)) return "slow";
  return health.state === "healthy" ? "ok" : health.state;
}

/**
 * An unhealthy agent's state with why and until when: `cooling down 41s (until 14:03:07) after 2
 * failed calls in a row: gemini: exit 1: 503`; `failing: 1 failed call in a row: …`; `slow: its
 * grace missed 2 turns in a row (no failure)`.
 */
export function healthDetail(health: AgentHealthView): string {
  if (slow(health)) {
    const n = health.missesInRow ?? 0;
    return `slow: its grace missed ${n} turn${n === 1 ? "" : "s"} in a row (no failure)`;
  }
  const n = health.failuresInRow;
  const calls = `${n} failed call${n === 1 ? "" : "s"} in a row`;
  const why = health.lastError ? `: ${health.lastError}` : "";
  if (health.state === "cooling-down") {
    const until = health.coolingUntil ? ` (until ${clockTime(health.coolingUntil)})` : "";
    return `${healthState(health)}${until} after ${calls}${why}`;
  }
  if (health.state === "healthy") return "ok";
  const probation = health.probation ? ` (${PROBATION})` : "";
  return `${health.state}${probation}: ${calls}${why}`;
}

/** The agents whose health the document tells (none from a gateway that predates it). */
export function agentsWithHealth(
  agents: readonly AgentView[] = [],
): (AgentView & { health: AgentHealthView })[] {
  return agents.filter((agent): agent is AgentView & { health: AgentHealthView } =>
    agent.health !== undefined
  );
}

/**
 * `status`'s lines: every agent's short state on one line, then one line per agent that is not
 * healthy; none when the gateway tells no health.
 */
export function healthLines(agents: readonly AgentView[] = []): string[] {
  const known = agentsWithHealth(agents);
  if (known.length === 0) return [];
  const summary = known.map(({ agent, health }) => `${agent} ${healthState(health)}`).join(", ");
  const details = known.filter(({ health }) => health.state !== "healthy" || slow(health))
    .map(({ agent, health }) => `    ${agent}: ${healthDetail(health)}`);
  return [`  agents:     ${summary}`, ...details];
}
