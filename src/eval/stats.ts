/** The eval's statistics: Wilson intervals, the exact McNemar test and medians (pure). */

/** The normal quantile of a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/** The Wilson score interval of `passed` successes in `runs` trials (0..1 when there are none). */
export function wilsonInterval(passed: number, runs: number, z = Z95): Interval {
  if (runs <= 0) return { low: 0, high: 1 };
  const p = passed / runs;
  const z2 = z * z;
  const denominator = 1 + z2 / runs;
  const center = (p + z2 / (2 * runs)) / denominator;
  const half = (z * Math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs))) / denominator;
  // At the ends the bound is exact (0 or 1); computing it would leave rounding error.
  return {
    low: passed <= 0 ? 0 : Math.max(0, center - half),
    high: passed >= runs ? 1 : Math.min(1, center + half),
  };
}

/** ln(n!) by summing logs (exact enough for the counts an eval has). */
function logFactorial(n: number): number {
  let sum = 0;
  for (let k = 2; k <= n; k++) sum += Math.log(k);
  return sum;
}

/**
 * The two-sided exact McNemar p-value: of the discordant pairs, `onlyA` went one way and
 * `onlyB` the other; under no difference each way is a fair coin (binomial, p = ½).
 */
export function mcnemarExact(onlyA: number, onlyB: number): number {
  const n = onlyA + onlyB;
  if (n === 0) return 1;
  const k = Math.min(onlyA, onlyB);
  const logN = logFactorial(n);
  const logHalf = n * Math.log(0.5);
  let tail = 0;
  let logI = 0; // ln(i!)
  for (let i = 0; i <= k; i++) {
    if (i > 0) logI += Math.log(i);
    tail += Math.exp(logN - logI - logFactorial(n - i) + logHalf);
  }
  return Math.min(1, 2 * tail);
}
