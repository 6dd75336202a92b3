/**
 * The fan-out judge: one cheap call that answers whether independent attempts would help.
 */
import type { AgentConfig } from "../../config/mod.ts";
import type { AgentResult } from "../../agents/types.ts";
import { type JudgeVerdict, parseJudgeVerdict } from "../action/structured_replies.ts";
import type { FanOutBar } from "./plan.ts";
import { judgePrompt } from "../prompt/prompts.ts";
import { oneLine } from "../../base/text.ts";

export type JudgeOutcome = { verdict: JudgeVerdict } | { failure: string };

/** Runs the judge through `call` (the turn's metered runner); never throws. */
export async function askJudge(
  call: (agent: AgentConfig, prompt: string) => Promise<AgentResult>,
  agent: AgentConfig,
  ask: string,
  bar: FanOutBar,
  context: { tools: boolean; continuation: boolean },
): Promise<JudgeOutcome> {
  const result = await call(agent, judgePrompt(ask, bar, context));
  if (!result.ok) {
    return { failure: `judge failed (${oneLine(result.error ?? "no error message")})` };
  }
  const verdict = parseJudgeVerdict(result.text);
  return verdict ? { verdict } : { failure: "judge reply unparseable" };
}
