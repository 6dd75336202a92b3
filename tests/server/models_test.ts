import assert from "node:assert/strict";
import type { AgentConfig } from "../../src/config/mod.ts";
import { CLAUDE_COUNCIL_MODEL_ID, COUNCIL_MODEL_ID, listModels } from "../../src/server/models.ts";

const agent = (name: string, model: string): AgentConfig => ({
  name,
  runner: "claude",
  model,
  args: [],
  env: {},
  timeoutMs: 1,
});

Deno.test("models: the council (svc-council, claude-council) plus each distinct agent model, Anthropic list shape", () => {
  const created = new Date("2026-01-02T03:04:05.000Z");
  const list = listModels(
    [agent("claude", "opus"), agent("codex", "gpt-5.5"), agent("claude-2", "opus")],
    created,
  );
  assert.deepEqual(list.data.map((m) => m.id), [
    COUNCIL_MODEL_ID,
    CLAUDE_COUNCIL_MODEL_ID,
    "opus",
    "gpt-5.5",
  ]);
  assert.equal(COUNCIL_MODEL_ID, "svc-council");
  assert.equal(CLAUDE_COUNCIL_MODEL_ID, "claude-council");
  for (const entry of list.data) {
    assert.equal(entry.type, "model");
    assert.ok(entry.display_name.length > 0);
    assert.ok(entry.description.length > 0);
    assert.equal(entry.created_at, "2026-01-02T03:04:05.000Z");
  }
  assert.equal(list.data[2].display_name, "opus (claude, claude-2)");
  assert.equal(list.has_more, false);
  assert.equal(list.first_id, "svc-council");
  assert.equal(list.last_id, "gpt-5.5");
});

Deno.test("models: with no agents, the council ids alone", () => {
  const list = listModels([], new Date(0));
  assert.deepEqual(list.data.map((m) => m.id), ["svc-council", "claude-council"]);
  assert.equal(list.last_id, "claude-council");
});

Deno.test("models: Claude Code's picker (ids with claude or anthropic) shows the council, named and described", () => {
  const list = listModels(
    [agent("claude", "opus"), agent("codex", "gpt-5.5"), agent("gemini", "gemini-2.5-pro")],
    new Date(0),
  );
  // Claude Code's own filter on the ids of GET /v1/models?limit=1000.
  const picker = list.data.filter((m) => /(claude|anthropic)/i.test(m.id));
  assert.deepEqual(picker.map((m) => m.id), ["claude-council"]);
  assert.equal(picker[0].display_name, "Council of 3 agents");
  assert.equal(
    picker[0].description,
    "Council of 3 agents: claude (opus), codex (gpt-5.5), gemini (gemini-2.5-pro); claude synthesizes",
  );
});
