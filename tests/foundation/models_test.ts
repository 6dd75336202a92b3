import assert from "node:assert/strict";
import type { AgentConfig } from "../../src/config.ts";
import { COUNCIL_MODEL_ID, listModels } from "../../src/models.ts";

const agent = (name: string, model: string): AgentConfig => ({
  name,
  runner: "claude",
  model,
  args: [],
  env: {},
  timeoutMs: 1,
});

Deno.test("models: svc-council plus each distinct agent model, Anthropic list shape", () => {
  const created = new Date("2026-01-02T03:04:05.000Z");
  const list = listModels(
    [agent("claude", "opus"), agent("codex", "gpt-5.5"), agent("claude-2", "opus")],
    created,
  );
  assert.deepEqual(list.data.map((m) => m.id), [COUNCIL_MODEL_ID, "opus", "gpt-5.5"]);
  assert.equal(COUNCIL_MODEL_ID, "svc-council");
  for (const entry of list.data) {
    assert.equal(entry.type, "model");
    assert.ok(entry.display_name.length > 0);
    assert.equal(entry.created_at, "2026-01-02T03:04:05.000Z");
  }
  assert.equal(list.data[1].display_name, "opus (claude, claude-2)");
  assert.equal(list.has_more, false);
  assert.equal(list.first_id, "svc-council");
  assert.equal(list.last_id, "gpt-5.5");
});

Deno.test("models: with no agents, the council id alone", () => {
  const list = listModels([], new Date(0));
  assert.deepEqual(list.data.map((m) => m.id), ["svc-council"]);
  assert.equal(list.last_id, "svc-council");
});
