/**
 * The `GET /v1/models` list (SPEC §2.1) in the Anthropic list shape: the council's synthetic id
 * `svc-council` plus each distinct model of `defaultAgents`.
 */
import type { AgentConfig } from "./config.ts";

/** The synthetic model id that stands for the whole council. */
export const COUNCIL_MODEL_ID = "svc-council";

export interface ModelEntry {
  type: "model";
  id: string;
  display_name: string;
  /** RFC 3339. */
  created_at: string;
}

export interface ModelList {
  data: ModelEntry[];
  has_more: false;
  first_id: string | null;
  last_id: string | null;
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
  const council: ModelEntry = {
    type: "model",
    id: COUNCIL_MODEL_ID,
    display_name: `Council of ${agents.length} agent${agents.length === 1 ? "" : "s"}`,
    created_at: created,
  };
  const members = [...byModel].filter(([model]) => model !== COUNCIL_MODEL_ID).map((
    [model, names],
  ): ModelEntry => ({
    type: "model",
    id: model,
    display_name: `${model} (${names.join(", ")})`,
    created_at: created,
  }));
  const data = [council, ...members];
  return {
    data,
    has_more: false,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
  };
}
