/**
 * The council's context window: the smallest member's prompt budget (per-agent `contextTokens`
 * or its model's default) in the gateway's token unit; `connect claude` and `launch` declare it
 * to Claude Code, count_tokens counts in the same unit, and the status line shows it.
 */
import assert from "node:assert/strict";
import { CHARS_PER_BUDGET_TOKEN, contextTokensOf } from "../../src/agents/context_budget.ts";
import { claudeEnvironment, claudeExports } from "../../src/cli/connect.ts";
import { claudeLaunch } from "../../src/cli/launch.ts";
import { contextPart, hostContextOf } from "../../src/cli/statusline/context_window.ts";
import type { AgentConfig } from "../../src/config/mod.ts";
import { councilContextTokens } from "../../src/server/council_window.ts";
import { countTokens } from "../../src/protocol/count_tokens.ts";

function agent(runner: AgentConfig["runner"], model: string, extra: Partial<AgentConfig> = {}) {
  return { name: runner, runner, model, args: [], env: {}, timeoutMs: 1, ...extra } as AgentConfig;
}

const COUNCIL = [agent("claude", "opus"), agent("codex", "gpt-5.5"), agent("gemini", "gemini-2.5")];

Deno.test("context window: the smallest member's budget, in count_tokens' unit", () => {
  const smallest = Math.min(...COUNCIL.map((a) => contextTokensOf(a)));
  assert.equal(smallest, contextTokensOf(COUNCIL[0]), "opus (200k) is the smallest window here");
  assert.equal(councilContextTokens(COUNCIL), Math.floor(smallest * 3 / 4));
  assert.equal(councilContextTokens([]), undefined);
});

Deno.test("context window: a member's smaller contextTokens lowers the council's window", () => {
  const before = councilContextTokens(COUNCIL)!;
  const small = [...COUNCIL, agent("command", "local", { name: "local", contextTokens: 40_000 })];
  assert.equal(councilContextTokens(small), 30_000);
  assert.ok(30_000 < before);
});

Deno.test("context window: a transcript count_tokens puts at the window fits every member's budget", () => {
  const window = councilContextTokens(COUNCIL)!;
  const text = "x".repeat(window * 4);
  const body = { messages: [{ role: "user", content: text }] };
  assert.equal(countTokens(body), window);
  const smallest = Math.min(...COUNCIL.map((a) => contextTokensOf(a)));
  assert.ok(Math.ceil(text.length / CHARS_PER_BUDGET_TOKEN) <= smallest);
  // One budget token over: the same count_tokens unit is what Claude Code compacts by.
  const over = "x".repeat((smallest + 1) * CHARS_PER_BUDGET_TOKEN);
  assert.ok(countTokens({ messages: [{ role: "user", content: over }] }) > window);
});

Deno.test("context window: connect claude and launch declare it to Claude Code", () => {
  const window = String(councilContextTokens(COUNCIL));
  const config = { host: "127.0.0.1", port: 6767, passApiKeys: false, defaultAgents: COUNCIL };
  assert.equal(
    claudeEnvironment(config, "http://127.0.0.1:6767").CLAUDE_CODE_MAX_CONTEXT_TOKENS,
    window,
  );
  assert.match(
    claudeExports(config),
    new RegExp(`^export CLAUDE_CODE_MAX_CONTEXT_TOKENS=${window}$`, "m"),
  );
  const launched = claudeLaunch(config, "http://127.0.0.1:6767", [], "council-gateway statusline");
  assert.equal(launched.env.CLAUDE_CODE_MAX_CONTEXT_TOKENS, window);
  // Claude Code's known models compact at CLAUDE_CODE_AUTO_COMPACT_WINDOW, from 100k up only.
  assert.equal(launched.env.CLAUDE_CODE_AUTO_COMPACT_WINDOW, window);
  const small = [...COUNCIL, agent("command", "local", { name: "local", contextTokens: 40_000 })];
  const smallEnv = claudeEnvironment({ ...config, defaultAgents: small }, "http://x");
  assert.equal(smallEnv.CLAUDE_CODE_MAX_CONTEXT_TOKENS, "30000");
  assert.equal("CLAUDE_CODE_AUTO_COMPACT_WINDOW" in smallEnv, false, "below its minimum");
  // No agents (nothing to measure): nothing declared.
  assert.equal(
    "CLAUDE_CODE_MAX_CONTEXT_TOKENS" in claudeEnvironment({ passApiKeys: false }, "http://x"),
    false,
  );
});

Deno.test("context window: the status line shows Claude Code's window, and the council's when they differ", () => {
  const stdin = (size: number, used: number | null) =>
    JSON.stringify({
      session_id: "s",
      context_window: { context_window_size: size, used_percentage: used },
    });
  const council = councilContextTokens(COUNCIL)!;
  assert.equal(contextPart(hostContextOf(stdin(council, 12.4)), council), "ctx 12% of 104k");
  assert.equal(
    contextPart(hostContextOf(stdin(200_000, 3)), council),
    "ctx 3% of 200k · council 104k",
  );
  assert.equal(contextPart(hostContextOf(stdin(council, null)), council), undefined);
  assert.equal(contextPart(hostContextOf('{"session_id":"s"}'), council), undefined);
  assert.equal(contextPart(hostContextOf("not json"), council), undefined);
});
