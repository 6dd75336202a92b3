import assert from "node:assert/strict";
import {
  BUILT_IN_PRICES,
  costOf,
  estimateTokens,
  findPrice,
  mergePricing,
} from "../../src/agents/cost.ts";

Deno.test("findPrice: the longest model-id prefix wins", () => {
  const table = mergePricing();
  assert.deepEqual(findPrice(table, "claude-opus-4-20250514"), { input: 15, output: 75 });
  assert.deepEqual(findPrice(table, "claude-opus-4-8[1m]"), { input: 5, output: 25 });
  assert.deepEqual(findPrice(table, "gpt-5.5"), { input: 5, output: 30 });
  assert.deepEqual(findPrice(table, "gpt-5-mini-2025"), { input: 0.25, output: 2 });
  assert.deepEqual(findPrice(table, "gpt-5"), { input: 1.25, output: 10 });
  assert.deepEqual(findPrice(table, "gemini-2.5-flash-lite"), { input: 0.1, output: 0.4 });
  assert.deepEqual(findPrice(table, "gemini-2.5-flash"), { input: 0.3, output: 2.5 });
  assert.equal(findPrice(table, "my-local-model"), undefined);
});

Deno.test("findPrice: CLI aliases price as the current model of their tier", () => {
  const table = mergePricing();
  assert.deepEqual(findPrice(table, "opus"), { input: 5, output: 25 });
  assert.deepEqual(findPrice(table, "sonnet"), { input: 3, output: 15 });
  assert.deepEqual(findPrice(table, "haiku"), { input: 1, output: 5 });
  assert.deepEqual(findPrice(table, "Claude-Haiku-4-5-20251001"), { input: 1, output: 5 });
});

Deno.test("mergePricing: config entries override and extend the built-in table", () => {
  const table = mergePricing({
    "gpt-5.5": { input: 1, output: 2 },
    "my-local": { input: 0, output: 0.5 },
  });
  assert.deepEqual(findPrice(table, "gpt-5.5-pro"), { input: 1, output: 2 });
  assert.deepEqual(findPrice(table, "my-local-model"), { input: 0, output: 0.5 });
  assert.deepEqual(BUILT_IN_PRICES["gpt-5.5"], { input: 5, output: 30 }, "built-ins untouched");
});

Deno.test("estimateTokens is ceil(chars / 4); costOf is per million tokens", () => {
  assert.equal(estimateTokens(0), 0);
  assert.equal(estimateTokens(1), 1);
  assert.equal(estimateTokens(8), 2);
  assert.equal(estimateTokens(9), 3);
  assert.equal(costOf({ input: 5, output: 25 }, 1_000_000, 200_000), 10);
});
