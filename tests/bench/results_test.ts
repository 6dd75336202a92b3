import assert from "node:assert/strict";
import {
  type Figure,
  figureCells,
  figuresTable,
  formatNumber,
  formatTable,
  missedTargets,
  quantile,
  summarize,
  target,
} from "../../scripts/bench/results.ts";

Deno.test("quantile interpolates between closest ranks", () => {
  const samples = [5, 1, 4, 2, 3];
  assert.equal(quantile(samples, 0), 1);
  assert.equal(quantile(samples, 0.5), 3);
  assert.equal(quantile(samples, 1), 5);
  assert.equal(quantile(samples, 0.25), 2);
  assert.equal(quantile([1, 2], 0.5), 1.5);
  assert.ok(Math.abs(quantile([10, 20, 30, 40], 0.99) - 39.7) < 1e-9);
});

Deno.test("quantile of 1..100 puts p99 just below the maximum", () => {
  const samples = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(quantile(samples, 0.5), 50.5);
  assert.ok(Math.abs(quantile(samples, 0.99) - 99.01) < 1e-9);
});

Deno.test("quantile does not reorder its input and is NaN without samples", () => {
  const samples = [3, 1, 2];
  quantile(samples, 0.5);
  assert.deepEqual(samples, [3, 1, 2]);
  assert.ok(Number.isNaN(quantile([], 0.5)));
});

Deno.test("summarize gives n, p50, p99, min, max and mean", () => {
  assert.deepEqual(summarize([4, 2, 6]), { n: 3, p50: 4, p99: 5.96, min: 2, max: 6, mean: 4 });
  const empty = summarize([]);
  assert.equal(empty.n, 0);
  assert.ok(Number.isNaN(empty.p50) && Number.isNaN(empty.max));
});

Deno.test("target passes at the limit and fails above it or on NaN", () => {
  assert.equal(target("≤ 5", 5, 5).pass, true);
  assert.equal(target("≤ 5", 5.01, 5).pass, false);
  assert.equal(target("≤ 5", NaN, 5).pass, false);
});

Deno.test("formatNumber keeps three significant digits below 100", () => {
  assert.equal(formatNumber(0.12345), "0.123");
  assert.equal(formatNumber(1.2345), "1.23");
  assert.equal(formatNumber(12.345), "12.3");
  assert.equal(formatNumber(123.45), "123");
  assert.equal(formatNumber(7), "7");
  assert.equal(formatNumber(NaN), "–");
});

const overhead: Figure = {
  scenario: "overhead",
  name: "Orchestration overhead",
  unit: "ms",
  gateway: summarize([4, 5, 6]),
  baseline: { label: "direct", value: summarize([1, 2, 3]) },
  target: { text: "≤ 5 ms p50", pass: true },
};
const rss: Figure = {
  scenario: "footprint",
  name: "Idle RSS",
  unit: "MB",
  gateway: 90,
  target: target("≤ 80 MB", 90, 80),
};

Deno.test("figureCells shows p50 / p99 with unit, the baseline's label and the verdict", () => {
  assert.deepEqual(figureCells(overhead), [
    "Orchestration overhead",
    "5 / 5.98 ms",
    "2 / 2.98 ms (direct)",
    "≤ 5 ms p50",
    "ok",
  ]);
  assert.deepEqual(figureCells(rss), ["Idle RSS", "90 MB", "", "≤ 80 MB", "MISSED"]);
});

Deno.test("a micro figure's former target is information only: shown, never MISSED", () => {
  const micro: Figure = { ...overhead, target: undefined, reference: "≤ 5 ms p50" };
  assert.deepEqual(figureCells(micro).slice(3), ["(≤ 5 ms p50)", "info"]);
  assert.deepEqual(missedTargets([micro]), []);
});

Deno.test("formatTable pads every column to its widest cell", () => {
  const table = formatTable(["a", "bb"], [["ccc", "d"], ["e", ""]]);
  assert.equal(
    table,
    [
      "| a   | bb |",
      "|-----|----|",
      "| ccc | d  |",
      "| e   |    |",
    ].join("\n"),
  );
});

Deno.test("figuresTable has a header, a rule and one row per figure", () => {
  const lines = figuresTable([overhead, rss]).split("\n");
  assert.equal(lines.length, 4);
  assert.match(lines[0], /^\| Figure +\| Gateway \(p50 \/ p99\) /);
  assert.match(lines[3], /^\| Idle RSS .*\| MISSED \|$/);
  assert.equal(new Set(lines.map((l) => l.length)).size, 1);
});

Deno.test("missedTargets lists only figures whose target failed", () => {
  assert.deepEqual(missedTargets([overhead, rss]).map((f) => f.name), ["Idle RSS"]);
});
