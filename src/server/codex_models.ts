/**
 * The `GET /v1/models` list in the shape Codex reads (`{"models": [...]}`, one model-info object
 * per model): the council under its synthetic id, with the council's context window. Codex keeps
 * its own metadata for the models it knows, so only the council is listed.
 */
import type { AgentConfig } from "../config/mod.ts";
import { councilContextTokens } from "./council_window.ts";
import { COUNCIL_MODEL_ID } from "./models.ts";

/** Codex asks with `?client_version=`; its originators are `codex_exec`, `codex-tui`, …. */
export function isCodexModelsRequest(url: string, headers: Headers): boolean {
  const originator = headers.get("originator") ?? "";
  return new URL(url).searchParams.has("client_version") || /^codex/i.test(originator);
}

/** What Codex's picker shows for the council, and the fields its model info requires. */
export function codexModelList(agents: readonly AgentConfig[]) {
  const n = agents.length;
  const members = agents.map((a) => `${a.name} (${a.model})`).join(", ");
  const window = councilContextTokens(agents);
  return {
    models: [{
      slug: COUNCIL_MODEL_ID,
      display_name: `Council of ${n} agent${n === 1 ? "" : "s"}`,
      description: n === 0 ? "No agents configured" : `Council: ${members}`,
      default_reasoning_level: "medium",
      supported_reasoning_levels: [
        { effort: "medium", description: "The council decides how deep each agent goes" },
      ],
      shell_type: "shell_command",
      visibility: "list",
      supported_in_api: true,
      priority: 0,
      upgrade: null,
      base_instructions: "You are a coding agent working with the user in their workspace. " +
        "Use the tools you are given to read, run and change things; answer plainly.",
      supports_reasoning_summaries: true,
      support_verbosity: false,
      default_verbosity: null,
      apply_patch_tool_type: "freeform",
      truncation_policy: { mode: "tokens", limit: 10_000 },
      supports_parallel_tool_calls: false,
      ...(window ? { context_window: window, max_context_window: window } : {}),
      experimental_supported_tools: [],
      input_modalities: ["text", "image"],
    }],
  };
}
