/** Agents found on PATH when none are configured. */
import { findOnPath } from "../base/executables.ts";
import { type AgentEntry, AgentSchema, DEFAULT_MODELS } from "./schema.ts";

type Env = (name: string) => string | undefined;

/** When no agents are configured: the claude / codex / gemini CLIs found on PATH. */
export function discoverAgents(env: Env): AgentEntry[] {
  return (["claude", "codex", "gemini"] as const)
    .filter((runner) => findOnPath(runner, env) !== null)
    .map((runner) => AgentSchema.parse({ runner, model: DEFAULT_MODELS[runner] }));
}
