/**
 * `GET /v1/models` answers Codex in the shape Codex 0.171.0 reads (`{"models": [...]}` with the
 * fields its model info requires) and everyone else in Anthropic's list shape; both list the
 * council's id, and Codex's entry carries the council's context window.
 */
import assert from "node:assert/strict";
import { codexModelList, isCodexModelsRequest } from "../../src/server/codex_models.ts";
import type { AgentConfig } from "../../src/config/mod.ts";
import { councilContextTokens } from "../../src/server/council_window.ts";
import { createApp } from "../../src/server/app.ts";
import { configOf } from "../support/test_config.ts";

const agents: AgentConfig[] = [
  { name: "claude", runner: "claude", model: "opus", args: [], env: {}, timeoutMs: 1 },
  { name: "codex", runner: "codex", model: "gpt-5.5", args: [], env: {}, timeoutMs: 1 },
];

/** Fields Codex's model info has no default for: a list missing one fails to decode. */
const CODEX_REQUIRED = [
  "slug",
  "display_name",
  "supported_reasoning_levels",
  "shell_type",
  "visibility",
  "supported_in_api",
  "priority",
  "base_instructions",
  "supports_reasoning_summaries",
  "support_verbosity",
  "truncation_policy",
  "supports_parallel_tool_calls",
  "experimental_supported_tools",
];

function app() {
  const none = () => new Response(null, { status: 500 });
  return createApp({
    config: { ...configOf({}), defaultAgents: agents },
    messages: none,
    responses: none,
    startedAt: new Date("2026-01-01T00:00:00.000Z"),
  });
}

Deno.test("codex models: Codex is told apart by its client_version query or its originator", () => {
  const url = "http://127.0.0.1:1/v1/models";
  assert.equal(isCodexModelsRequest(`${url}?client_version=0.171.0`, new Headers()), true);
  assert.equal(isCodexModelsRequest(url, new Headers({ originator: "codex-tui" })), true);
  assert.equal(isCodexModelsRequest(url, new Headers({ originator: "codex_exec" })), true);
  assert.equal(isCodexModelsRequest(`${url}?limit=1000`, new Headers({ "x-app": "cli" })), false);
});

Deno.test("codex models: one council entry with every required field and the council's window", () => {
  const list = codexModelList(agents);
  assert.equal(list.models.length, 1);
  const [council] = list.models;
  for (const field of CODEX_REQUIRED) assert.ok(field in council, `missing ${field}`);
  assert.equal(council.slug, "svc-council");
  assert.equal(council.visibility, "list");
  assert.equal(council.context_window, councilContextTokens(agents));
  assert.match(council.description, /claude \(opus\), codex \(gpt-5\.5\)/);
  for (const level of council.supported_reasoning_levels) {
    assert.match(level.effort, /^(?:none|minimal|low|medium|high|xhigh)$/);
  }
});

Deno.test("codex models: GET /v1/models gives Codex its shape and Claude Code the Anthropic list, both with the council", async () => {
  const codex = await app().request("/v1/models?client_version=0.171.0", {
    headers: { originator: "codex-tui" },
  });
  assert.equal(codex.status, 200);
  const codexBody = await codex.json();
  assert.equal(codexBody.data, undefined);
  assert.deepEqual(codexBody.models.map((m: { slug: string }) => m.slug), ["svc-council"]);

  const claude = await app().request("/v1/models?limit=1000", { headers: { "x-app": "cli" } });
  assert.equal(claude.status, 200);
  const claudeBody = await claude.json();
  assert.equal(claudeBody.models, undefined);
  const ids = claudeBody.data.map((m: { id: string }) => m.id);
  assert.ok(ids.includes("svc-council") && ids.includes("claude-council"), ids.join(", "));
});
