/**
 * Token estimates and cost: the built-in price table, config overrides, longest-prefix lookup.
 */
import type { Price } from "../config.ts";
import type { PriceTable } from "./types.ts";

/**
 * USD per million tokens (standard tier), from docs/protocols.md §5. Prices drift: config
 * `pricing` overrides or extends these. Keys are lower-case model-id prefixes; CLI aliases
 * (`opus`, `sonnet`, `haiku`, `fable`) map to the current model of that tier.
 */
export const BUILT_IN_PRICES: Readonly<PriceTable> = Object.freeze({
  // Anthropic
  "opus": { input: 5, output: 25 },
  "sonnet": { input: 3, output: 15 },
  "haiku": { input: 1, output: 5 },
  "fable": { input: 10, output: 50 },
  "claude-opus-4": { input: 15, output: 75 },
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4-5": { input: 5, output: 25 },
  "claude-opus-4-6": { input: 5, output: 25 },
  "claude-opus-4-7": { input: 5, output: 25 },
  "claude-opus-4-8": { input: 5, output: 25 },
  "claude-opus-5": { input: 5, output: 25 },
  // Sonnet 5 is listed at $2/$10 only by third parties (unverified); the tier price is kept.
  "claude-sonnet": { input: 3, output: 15 },
  "claude-haiku": { input: 1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  "claude-fable": { input: 10, output: 50 },
  "claude-mythos": { input: 10, output: 50 },
  // OpenAI
  "gpt-5": { input: 1.25, output: 10 },
  "gpt-5-mini": { input: 0.25, output: 2 },
  "gpt-5-nano": { input: 0.05, output: 0.4 },
  "gpt-5.1": { input: 1.25, output: 10 },
  "gpt-5.2": { input: 1.75, output: 14 },
  "gpt-5.3": { input: 1.75, output: 14 },
  "gpt-5.4": { input: 2.5, output: 15 },
  "gpt-5.4-mini": { input: 0.75, output: 4.5 },
  "gpt-5.4-nano": { input: 0.2, output: 1.25 },
  "gpt-5.5": { input: 5, output: 30 },
  // Google
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
});

/** The built-in table with config `pricing` laid over it (keys compared in lower case). */
export function mergePricing(overrides: Readonly<PriceTable> = {}): PriceTable {
  const table: PriceTable = { ...BUILT_IN_PRICES };
  for (const [prefix, price] of Object.entries(overrides)) table[prefix.toLowerCase()] = price;
  return table;
}

/** The price whose key is the longest prefix of the model id (case-insensitive). */
export function findPrice(table: Readonly<PriceTable>, model: string): Price | undefined {
  const id = model.toLowerCase();
  let best: string | undefined;
  for (const prefix of Object.keys(table)) {
    if (
      id.startsWith(prefix.toLowerCase()) && (best === undefined || prefix.length > best.length)
    ) {
      best = prefix;
    }
  }
  return best === undefined ? undefined : table[best];
}

/** Tokens ≈ characters / 4, rounded up (an estimate, not a tokenizer). */
export function estimateTokens(chars: number): number {
  return Math.ceil(Math.max(0, chars) / 4);
}

/** USD for a token count at a price (USD per million tokens). */
export function costOf(price: Price, inputTokens: number, outputTokens: number): number {
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
