/**
 * The planning step of a turn: the plan (asking the fan-out judge when the policy says so),
 * without the agents that are cooling down, recorded as the turn's decision and announced.
 */
import type { AgentConfig } from "../../config/mod.ts";
import { callAgent } from "../calls/calls.ts";
import type { AgentHealthStatus } from "../calls/health.ts";
import { askJudge, type JudgeOutcome } from "../plan/judge.ts";
import {
  judgeAgent,
  planTurn,
  resolveVerdict,
  type RunPlan,
  type TurnPlan,
  withoutCooling,
} from "../plan/plan.ts";
import { tenthSeconds } from "./progress.ts";
import { oneLine } from "../../base/text.ts";
import type { TurnContext } from "./context.ts";

export async function planStep(turn: TurnContext): Promise<RunPlan> {
  const { config, health } = turn.env;
  const first = planTurn(turn.request, config);
  const planned = first.kind === "judge" ? await judgedPlan(turn, first) : first;
  const cooling = (agent: string) => health.coolingDown(agent) !== undefined;
  const { plan, skipped } = withoutCooling(planned, config.defaultAgents, cooling);
  for (const agent of skipped) {
    turn.progress(`${agent} skipped — ${coolingNote(turn, health.coolingDown(agent)!)}`, "info");
  }
  const children = plan.kind === "single" ? [plan.child] : plan.children;
  if (children.every((c) => cooling(c.agent.name))) {
    turn.progress("every agent is cooling down after failures — trying anyway", "info");
  }
  turn.planned(plan.kind, plan.reason, children.map((c) => c.label));
  turn.env.observer.turnDecided(turn.request.id, turn.decision);
  const who = plan.kind === "single"
    ? `one agent: ${plan.child.label}${plan.child.model ? ` (${plan.child.model})` : ""}`
    : `${children.length} agents: ${turn.consulted.join(", ")}`;
  turn.progress(`consulting ${who} — ${plan.reason}`, "info");
  return plan;
}

async function judgedPlan(
  turn: TurnContext,
  first: Extract<TurnPlan, { kind: "judge" }>,
): Promise<RunPlan> {
  const { config, health } = turn.env;
  const request = turn.request;
  const judge = judgeAgent(config.defaultAgents, config.judge);
  const cooling = health.coolingDown(judge.name);
  let heard: JudgeOutcome;
  if (cooling) {
    turn.progress(`fan-out judge skipped — ${coolingNote(turn, cooling)}`, "info");
    heard = { failure: "judge cooling down" };
  } else {
    turn.progress(`asking the fan-out judge (${judge.model}) — ${first.reason}`, "debug");
    heard = await askJudge(
      (agent: AgentConfig, prompt: string) =>
        callAgent(turn, agent, prompt, { role: "judge", label: "judge", access: "read-only" }),
      judge,
      request.ask,
      first.bar,
      { tools: request.tools.length > 0, continuation: request.continuation },
    );
  }
  return "verdict" in heard
    ? resolveVerdict(heard.verdict, config)
    : resolveVerdict(undefined, config, heard.failure);
}

/** `cooling down after 2 failed calls in a row (claude: exit 1: …); back in 42.0s` */
function coolingNote(turn: TurnContext, status: AgentHealthStatus): string {
  const left = tenthSeconds((status.coolingUntil ?? 0) - turn.env.clock.now());
  const last = status.lastError ? ` (${oneLine(status.lastError)})` : "";
  const n = status.failuresInRow;
  const calls = `${n} failed call${n === 1 ? "" : "s"} in a row`;
  return `cooling down after ${calls}${last}; back in ${left}`;
}
