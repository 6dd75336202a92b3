/**
 * The planning step of a turn: the plan (asking the fan-out judge when the policy says so),
 * recorded as the turn's decision and announced on progress.
 */
import { callAgent } from "./calls.ts";
import { askJudge } from "./judge.ts";
import { judgeAgent, planTurn, resolveVerdict, type RunPlan } from "./plan.ts";
import type { TurnContext } from "./turn_context.ts";

export async function planStep(turn: TurnContext): Promise<RunPlan> {
  const { config } = turn.env;
  const request = turn.request;
  const first = planTurn(request, config);
  let plan: RunPlan;
  if (first.kind === "judge") {
    const judge = judgeAgent(config.defaultAgents, config.judge);
    turn.progress(`asking the fan-out judge (${judge.model}) — ${first.reason}`, "debug");
    const heard = await askJudge(
      (agent, prompt) =>
        callAgent(turn, agent, prompt, { role: "judge", label: "judge", access: "read-only" }),
      judge,
      request.ask,
      first.bar,
      { tools: request.tools.length > 0, continuation: request.continuation },
    );
    plan = "verdict" in heard
      ? resolveVerdict(heard.verdict, config)
      : resolveVerdict(undefined, config, heard.failure);
  } else {
    plan = first;
  }
  const children = plan.kind === "single" ? [plan.child] : plan.children;
  turn.consulted = children.map((c) => c.label);
  turn.decision = { kind: plan.kind, reason: plan.reason, agents: [...turn.consulted] };
  turn.env.observer.turnDecided(request.id, turn.decision);
  const who = plan.kind === "single"
    ? `one agent: ${plan.child.label}${plan.child.model ? ` (${plan.child.model})` : ""}`
    : `${children.length} agents: ${turn.consulted.join(", ")}`;
  turn.progress(`consulting ${who} — ${plan.reason}`, "info");
  return plan;
}
