/**
 * What a reload logs as changed: plain values before → after, agents by name and model, secrets
 * never shown, and the keys that apply only after a restart marked as such.
 */
import assert from "node:assert/strict";
import { configChanges } from "../../src/config/differences.ts";
import { configOf } from "../support/test_config.ts";

const AGENTS = [{ runner: "claude", model: "opus" }, {
  runner: "codex",
  model: "gpt-5.5",
}] as const;

Deno.test("config changes: values, agents, secrets and restart-only keys", () => {
  const before = configOf({ token: "old-secret-token", defaultAgents: [...AGENTS] });
  const after = configOf({
    token: "new-secret-token",
    fanOutPolicy: "never",
    port: 7000,
    workspaceRoots: ["/src"],
    defaultAgents: [{ runner: "claude", model: "sonnet" }],
  });
  const changes = configChanges(before, after);
  const text = Object.fromEntries(changes.map((c) => [c.key, c.text]));
  assert.deepEqual(text, {
    port: "6767 → 7000",
    token: "changed",
    fanOutPolicy: "auto → never",
    workspaceRoots: "[] → [/src]",
    councilSize: "2 → 1",
    defaultAgents: "claude:opus,codex:gpt-5.5 → claude:sonnet",
  });
  assert.deepEqual(changes.filter((c) => c.restart).map((c) => c.key), ["port"]);
  assert.ok(!JSON.stringify(changes).includes("secret-token"));
});

Deno.test("config changes: an agent's settings, the same config, a token set or removed", () => {
  const base = configOf({ defaultAgents: [{ runner: "claude", model: "opus" }] });
  assert.deepEqual(
    configChanges(base, configOf({ defaultAgents: [{ runner: "claude", model: "opus" }] })),
    [],
  );
  const env = configOf({
    defaultAgents: [{ runner: "claude", model: "opus", env: { KEY: "hidden-value" } }],
  });
  const [change] = configChanges(base, env);
  assert.equal(change.text, "claude:opus (settings of an agent changed)");
  assert.ok(!change.text.includes("hidden-value"));
  assert.equal(
    configChanges(
      base,
      configOf({ token: "abcd-token", defaultAgents: [{ runner: "claude", model: "opus" }] }),
    )[0].text,
    "set",
  );
});
