/**
 * Token estimates and cost: the built-in price table, config overrides, longest-prefix lookup.
 */
import type { Price } from "../config/mod.ts";
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

/**
 * Prompt-cache prices as multiples of the input price, by model-id prefix, where a price sets
 * none of its own: Anthropic bills 5-minute cache writes at 1.25× and reads at 0.1×; OpenAI's
 * and Google's writes cost what input costs. A model not listed gets no discount.
 */
const CACHE_RATES: Readonly<Record<string, { read: number; write: number }>> = Object
  .freeze({
    "claude": { read: 0.1, write: 1.25 },
    "opus": { read: 0.1, write: 1.25 },
    "sonnet": { read: 0.1, write: 1.25 },
    "haiku": { read: 0.1, write: 1.25 },
    "fable": { read: 0.1, write: 1.25 },
    "gpt-5": { read: 0.1, write: 1 },
    "gpt-4.1": { read: 0.25, write: 1 },
    "gpt-4o": { read: 0.5, write: 1 },
    "o3": { read: 0.25, write: 1 },
    "o4": { read: 0.25, write: 1 },
    "gemini": { read: 0.25, write: 1 },
  });

/** The built-in table with config `pricing` laid over it (keys compared in lower case). */
export function mergePricing(overrides: Readonly<PriceTable> = {}): PriceTable {
  const table: PriceTable = { ...BUILT_IN_PRICES };
  for (const [prefix, price] of Object.entries(overrides)) table[prefix.toLowerCase()] = price;
  return table;
}

/** The value whose key is the longest prefix of the model id (case-insensitive). */
export function byLongestPrefix<T>(
  table: Readonly<Record<string, T>>,
  model: string,
): T | undefined {
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

/** The price whose key is the longest prefix of the model id (case-insensitive). */
export function findPrice(table: Readonly<PriceTable>, model: string): Price | undefined {
  return byLongestPrefix(table, model);
}

/** `findPrice`, with the cache prices filled in from `CACHE_RATES` where the price sets none. */
export function findCachePrice(table: Readonly<PriceTable>, model: string): Price | undefined {
  const price = findPrice(table, model);
  if (!price) return undefined;
  const rates = byLongestPrefix(CACHE_RATES, model) ?? { read: 1, write: 1 };
  return {
    ...price,
    cacheRead: price.cacheRead ?? price.input * rates.read,
    cacheWrite: price.cacheWrite ?? price.input * rates.write,
  };
}

/** Tokens ≈ characters / 4, rounded up (an estimate, not a tokenizer). */
export function estimateTokens(chars: number): number {
  return Math.ceil(Math.max(0, chars) / 4);
}

/** Input tokens that were read from or written to a prompt cache (part of the input tokens). */
interface CacheTokens {
  read: number;
  write: number;
}

/**
 * USD for a token count at a price (USD per million tokens). Of `inputTokens`, `cache.read`
 * are billed at the cache-read price and `cache.write` at the cache-write price.
 */
export function costOf(
  price: Price,
  inputTokens: number,
  outputTokens: number,
  cache: CacheTokens = { read: 0, write: 0 },
): number {
  const read = Math.min(Math.max(0, cache.read), inputTokens);
  const write = Math.min(Math.max(0, cache.write), inputTokens - read);
  const plain = inputTokens - read - write;
  return (plain * price.input + read * (price.cacheRead ?? price.input) +
    write * (price.cacheWrite ?? price.input) + outputTokens * price.output) / 1_000_000;
}
