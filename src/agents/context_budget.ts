/**
 * How many tokens of prompt an agent may be sent: its `contextTokens`, or a default from the
 * model family's context window less room for the reply and for the CLI's own instructions.
 */
import type { AgentConfig, Runner } from "../config/mod.ts";
import { byLongestPrefix } from "./cost.ts";
import { DEFAULT_MAX_TOKENS } from "./http/anthropic.ts";
import { cliAdapterOf } from "./cli/runners.ts";

/**
 * Context windows in tokens (input the model accepts), by lower-case model-id prefix; the
 * longest prefix wins. CLI aliases (`opus`, `sonnet`, …) are the tier's current model.
 */
const CONTEXT_WINDOWS: Readonly<Record<string, number>> = Object.freeze({
  "claude": 200_000,
  "opus": 200_000,
  "sonnet": 200_000,
  "haiku": 200_000,
  "fable": 200_000,
  // GPT-5 models accept 272k of their 400k window as input.
  "gpt-5": 272_000,
  "gpt-4.1": 1_000_000,
  "gpt-4o": 128_000,
  "o3": 200_000,
  "o4": 200_000,
  "gemini": 1_000_000,
  "llama": 128_000,
  "qwen": 128_000,
  "mistral": 128_000,
  "deepseek": 128_000,
});

/** The window assumed for a model the table does not know. */
export const UNKNOWN_MODEL_WINDOW = 128_000;

/** Tokens a runner's own system prompt and tool definitions take before our prompt. */
export function overheadTokensOf(runner: Runner): number {
  return cliAdapterOf(runner)?.overheadTokens ?? 0;
}

/** Room kept for the reply when the agent sets no `maxTokens` (at most a quarter of the window). */
const REPLY_RESERVE_TOKENS = 32_000;

/** The smallest budget a default comes to, however small the window. */
const MIN_CONTEXT_TOKENS = 1_000;

/**
 * Characters per token when counting a prompt against its budget: deliberately pessimistic
 * (code and JSON tokenise denser than prose), so an estimate within budget is within the window.
 */
export const CHARS_PER_BUDGET_TOKEN = 3;

/** Tokens a text of this many characters is counted as against a budget. */
export function budgetTokens(chars: number): number {
  return Math.ceil(Math.max(0, chars) / CHARS_PER_BUDGET_TOKEN);
}

/** The context window of a model id (the table's, or the unknown-model default). */
export function contextWindowOf(model: string): number {
  return byLongestPrefix(CONTEXT_WINDOWS, model) ?? UNKNOWN_MODEL_WINDOW;
}

/** The default budget: the window less the reply's room and the CLI's own instructions. */
export function defaultContextTokens(
  runner: Runner,
  model: string,
  maxTokens?: number,
): number {
  const window = contextWindowOf(model);
  const reply = maxTokens ??
    (runner === "anthropic" ? DEFAULT_MAX_TOKENS : Math.min(REPLY_RESERVE_TOKENS, window / 4));
  return Math.max(MIN_CONTEXT_TOKENS, Math.floor(window - reply - overheadTokensOf(runner)));
}

/** The prompt budget of an agent run with `model` (default: the agent's own). */
export function contextTokensOf(agent: AgentConfig, model = agent.model): number {
  return agent.contextTokens ?? defaultContextTokens(agent.runner, model, agent.maxTokens);
}
