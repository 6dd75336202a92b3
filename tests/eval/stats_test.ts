/** The eval's statistics against values computed by hand and published tables. */
import assert from "node:assert/strict";
import { mcnemarExact, wilsonInterval } from "../../src/eval/stats.ts";

const close = (actual: number, expected: number, digits = 6) =>
  assert.ok(Math.abs(actual - expected) < 10 ** -digits, `${actual} ≠ ${expected}`);

Deno.test("Wilson interval matches known 95 % values", () => {
  const cases: [number, number, number, number][] = [
    [0, 10, 0, 0.2775328],
    [5, 10, 0.2365931, 0.7634069],
    [10, 10, 0.7224672, 1],
    [1, 1, 0.2065493, 1],
    [81, 100, 0.7222115, 0.8748525],
  ];
  for (const [passed, runs, low, high] of cases) {
    const interval = wilsonInterval(passed, runs);
    close(interval.low, low);
    close(interval.high, high);
  }
});

Deno.test("Wilson interval stays within 0..1, contains the rate and is symmetric", () => {
  for (let runs = 1; runs <= 40; runs++) {
    for (let passed = 0; passed <= runs; passed++) {
      const { low, high } = wilsonInterval(passed, runs);
      assert.ok(low >= 0 && high <= 1 && low <= passed / runs && passed / runs <= high);
      const mirror = wilsonInterval(runs - passed, runs);
      close(low, 1 - mirror.high, 12);
    }
  }
});

Deno.test("Wilson interval of no runs is the whole range", () => {
  assert.deepEqual(wilsonInterval(0, 0), { low: 0, high: 1 });
});

Deno.test("exact McNemar p is the two-sided binomial tail of the discordant pairs", () => {
  assert.equal(mcnemarExact(0, 0), 1);
  close(mcnemarExact(5, 0), 2 / 32, 12);
  close(mcnemarExact(0, 6), 2 / 64, 12);
  close(mcnemarExact(1, 9), 22 / 1024, 12);
  close(mcnemarExact(8, 2), 112 / 1024, 12);
  assert.equal(mcnemarExact(3, 3), 1);
  assert.equal(mcnemarExact(4, 5), 1);
  assert.equal(mcnemarExact(1, 0), 1);
});

Deno.test("exact McNemar p is symmetric and finite for large counts", () => {
  close(mcnemarExact(7, 19), mcnemarExact(19, 7), 12);
  const balanced = mcnemarExact(1000, 1000);
  assert.equal(balanced, 1);
  const lopsided = mcnemarExact(0, 2000);
  assert.ok(Number.isFinite(lopsided) && lopsided >= 0 && lopsided < 1e-300);
  const edge = mcnemarExact(450, 550);
  close(edge, 0.0017305360849763176, 9);
});
