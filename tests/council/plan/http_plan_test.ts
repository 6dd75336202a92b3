/** Planning with HTTP agents: background pinning to an `anthropic` agent, the default judge. */
import assert from "node:assert/strict";
import type { AgentConfig } from "../../../src/config/mod.ts";
import {
  agentIndexForModel,
  JUDGE_TIMEOUT_MS,
  judgeAgent,
  OPENAI_CHEAP_MODEL,
  planTurn,
} from "../../../src/council/plan/plan.ts";
import { testConfig } from "../../support/scripted_agents.ts";

function agents(...entries: Partial<AgentConfig>[]): AgentConfig[] {
  return entries.map((e, i) => ({
    name: `a${i}`,
    runner: "command",
    model: "m",
    args: [],
    env: {},
    timeoutMs: 600_000,
    ...e,
  } as AgentConfig));
}

Deno.test("background pinning: a claude model goes to an anthropic agent when no claude CLI exists", () => {
  const council = agents(
    { runner: "openai", model: "qwen2.5-coder", baseUrl: "http://localhost:11434/v1" },
    { runner: "anthropic", model: "claude-sonnet-4-5" },
  );
  assert.equal(agentIndexForModel(council, "claude-haiku-4-5-20251001"), 1);
  const plan = planTurn(
    { model: "claude-haiku-4-5-20251001", continuation: false, ask: "title this" },
    { ...testConfig(), defaultAgents: council },
  );
  assert.equal(plan.kind, "single");
  if (plan.kind !== "single") return;
  assert.equal(plan.child.agent.runner, "anthropic");
  assert.equal(plan.child.model, "claude-haiku-4-5-20251001");
  assert.equal(plan.child.directive, false);
});

Deno.test("background pinning: the claude CLI is still preferred over the anthropic API", () => {
  const council = agents({ runner: "anthropic", model: "claude-opus-4-8" }, {
    runner: "claude",
    model: "opus",
  });
  assert.equal(agentIndexForModel(council, "claude-3-5-haiku"), 1);
  assert.equal(agentIndexForModel(agents({ runner: "openai", model: "x" }), "haiku"), 0);
});

Deno.test("judge: an anthropic agent 0 judges with its cheap model over its own endpoint", () => {
  const council = agents({
    runner: "anthropic",
    model: "claude-opus-4-8",
    baseUrl: "https://proxy.example.com",
    apiKeyEnv: "PROXY_KEY",
    headers: { "x-team": "a" },
    maxTokens: 2000,
  });
  assert.deepEqual(judgeAgent(council, undefined), {
    name: "judge",
    runner: "anthropic",
    model: "claude-haiku-4-5",
    args: [],
    env: {},
    timeoutMs: JUDGE_TIMEOUT_MS,
    baseUrl: "https://proxy.example.com",
    apiKeyEnv: "PROXY_KEY",
    headers: { "x-team": "a" },
    maxTokens: 2000,
  });
});

Deno.test("judge: an openai agent 0 uses gpt-5-mini only on OpenAI's own API, else its own model", () => {
  const openai = agents({
    runner: "openai",
    model: "gpt-5.5",
    baseUrl: "https://api.openai.com/v1",
  });
  assert.equal(judgeAgent(openai, undefined).model, OPENAI_CHEAP_MODEL);
  assert.equal(judgeAgent(openai, undefined).baseUrl, "https://api.openai.com/v1");
  const ollama = agents({
    runner: "openai",
    model: "qwen2.5-coder:32b",
    baseUrl: "http://localhost:11434/v1",
  });
  assert.equal(judgeAgent(ollama, undefined).model, "qwen2.5-coder:32b");
  assert.equal(judgeAgent(ollama, undefined).baseUrl, "http://localhost:11434/v1");
});

Deno.test("judge: its own fields win, and another runner does not inherit agent 0's endpoint", () => {
  const council = agents({
    runner: "openai",
    model: "llama3.1",
    baseUrl: "http://localhost:11434/v1",
    maxTokens: 100,
  });
  const same = judgeAgent(council, { model: "llama3.2:1b", maxTokens: 50, args: [], env: {} });
  assert.deepEqual([same.model, same.baseUrl, same.maxTokens], [
    "llama3.2:1b",
    "http://localhost:11434/v1",
    50,
  ]);
  const other = judgeAgent(council, { runner: "anthropic", args: [], env: {} });
  assert.deepEqual([other.runner, other.model, other.baseUrl, other.maxTokens], [
    "anthropic",
    "claude-haiku-4-5",
    undefined,
    undefined,
  ]);
});
