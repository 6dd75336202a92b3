/** Each agent's prompt budget: `contextTokens`, else a default by model family and runner. */
import assert from "node:assert/strict";
import {
  contextTokensOf,
  contextWindowOf,
  defaultContextTokens,
  UNKNOWN_MODEL_WINDOW,
} from "../../src/agents/context_budget.ts";
import { DEFAULT_MAX_TOKENS } from "../../src/agents/http/anthropic.ts";
import { configOf } from "../support/test_config.ts";

Deno.test("context budget: windows by model family, longest prefix, unknown models a default", () => {
  assert.equal(contextWindowOf("claude-opus-5-5"), 200_000);
  assert.equal(contextWindowOf("opus"), 200_000);
  assert.equal(contextWindowOf("gpt-5.5"), 272_000);
  assert.equal(contextWindowOf("gpt-4.1-mini"), 1_000_000);
  assert.equal(contextWindowOf("gemini-2.5-pro"), 1_000_000);
  assert.equal(contextWindowOf("Qwen3-Coder-30B"), 128_000);
  assert.equal(contextWindowOf("my-local-model"), UNKNOWN_MODEL_WINDOW);
});

Deno.test("context budget: the default leaves room for the reply and the CLI's own prompt", () => {
  assert.equal(
    defaultContextTokens("claude", "opus"),
    200_000 - 32_000 - 30_000,
  );
  assert.equal(defaultContextTokens("codex", "gpt-5.5"), 272_000 - 32_000 - 20_000);
  assert.equal(
    defaultContextTokens("anthropic", "claude-sonnet-4-5"),
    200_000 - DEFAULT_MAX_TOKENS,
  );
  assert.equal(defaultContextTokens("openai", "gpt-5-mini", 4000), 272_000 - 4000);
  // A small window keeps a quarter for the reply, and never goes below the floor.
  assert.equal(defaultContextTokens("command", "my-local-model"), UNKNOWN_MODEL_WINDOW - 32_000);
});

Deno.test("context budget: contextTokens in the config wins, for agents and the judge", () => {
  const config = configOf({
    defaultAgents: [
      { runner: "claude", model: "opus", contextTokens: 50_000 },
      { runner: "openai", model: "llama3", baseUrl: "http://127.0.0.1:1/v1", contextTokens: 6000 },
      { runner: "codex", model: "gpt-5.5" },
    ],
    judge: { runner: "claude", model: "haiku", contextTokens: 9000 },
  });
  const [claude, local, codex] = config.defaultAgents;
  assert.equal(contextTokensOf(claude), 50_000);
  assert.equal(contextTokensOf(local), 6000);
  assert.equal(contextTokensOf(codex), defaultContextTokens("codex", "gpt-5.5"));
  // A model override (background pinning) is budgeted by its own family.
  assert.equal(contextTokensOf(codex, "my-local-model"), defaultContextTokens("codex", "x"));
  assert.equal(config.judge?.contextTokens, 9000);
  assert.throws(
    () => configOf({ defaultAgents: [{ runner: "claude", model: "opus", contextTokens: 0 }] }),
    /contextTokens/,
  );
});
