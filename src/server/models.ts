/**
 * The `GET /v1/models` list (CONTRACT.md §2.1) in the Anthropic list shape: the council under its
 * synthetic id `svc-council` and under `claude-council` (Claude Code's model picker keeps only
 * ids containing "claude" or "anthropic"), plus each distinct model of `defaultAgents`.
 */
import type { AgentConfig } from "../config/mod.ts";

/** The synthetic model id that stands for the whole council. */
export const COUNCIL_MODEL_ID = "svc-council";
/** The same council under an id Claude Code's model picker shows. */
export const CLAUDE_COUNCIL_MODEL_ID = "claude-council";

interface ModelEntry {
  type: "model";
  id: string;
  display_name: string;
  /** What the entry is; Claude Code shows it (cut to 100 characters) under the name. */
  description: string;
  /** RFC 3339. */
  created_at: string;
}

interface ModelList {
  data: ModelEntry[];
  has_more: false;
  first_id: string | null;
  last_id: string | null;
}

/** `claude (opus), codex (gpt-5.5)`: who sits on the council, synthesizer first. */
function members(agents: readonly AgentConfig[]): string {
  return agents.map((a) => `${a.name} (${a.model})`).join(", ");
}

function councilEntries(agents: readonly AgentConfig[], created: string): ModelEntry[] {
  const n = agents.length;
  const size = `${n} agent${n === 1 ? "" : "s"}`;
  const description = n === 0
    ? "No agents configured"
    : `Council of ${size}: ${members(agents)}; ${agents[0].name} synthesizes`;
  return [COUNCIL_MODEL_ID, CLAUDE_COUNCIL_MODEL_ID].map((id) => ({
    type: "model",
    id,
    display_name: `Council of ${size}`,
    description,
    created_at: created,
  }));
}

/** Builds the list; `createdAt` is when this gateway started (models have no other date). */
export function listModels(agents: readonly AgentConfig[], createdAt: Date): ModelList {
  const created = createdAt.toISOString();
  const byModel = new Map<string, string[]>();
  for (const agent of agents) {
    const names = byModel.get(agent.model) ?? [];
    if (!names.includes(agent.name)) names.push(agent.name);
    byModel.set(agent.model, names);
  }
  const council = councilEntries(agents, created);
  const ids = new Set(council.map((entry) => entry.id));
  const modelEntries = [...byModel].filter(([model]) => !ids.has(model)).map((
    [model, names],
  ): ModelEntry => ({
    type: "model",
    id: model,
    display_name: `${model} (${names.join(", ")})`,
    description: `One agent of the council: ${names.join(", ")}`,
    created_at: created,
  }));
  const data = [...council, ...modelEntries];
  return {
    data,
    has_more: false,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
  };
}
