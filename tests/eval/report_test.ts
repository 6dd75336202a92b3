/** The eval report: per-arm figures, pairing by task and run, the verdict, the HTML page. */
import assert from "node:assert/strict";
import { buildReport, reportMarkdown } from "../../src/eval/report.ts";
import { reportHtml } from "../../src/eval/report_html.ts";
import type { RunResult } from "../../src/eval/results.ts";

function results(arm: string, solved: string[], tasks: string[], usd = 0.1): RunResult[] {
  return tasks.map((task, i) => ({
    arm,
    task,
    run: 1,
    passed: solved.includes(task),
    usd,
    wallMs: 1000 * (i + 1),
    turns: 2,
    tokens: 100,
  }));
}

const TASKS = Array.from({ length: 10 }, (_, i) => `t${i}`);

Deno.test("per arm: runs, passes, Wilson interval, $ per solved task, median wall", () => {
  const report = buildReport(["council", "solo:a"], [
    ...results("council", TASKS.slice(0, 8), TASKS, 0.3),
    ...results("solo:a", TASKS.slice(0, 4), TASKS, 0.1),
  ]);
  const council = report.arms[0];
  assert.equal(council.arm, "council");
  assert.equal(council.runs, 10);
  assert.equal(council.passed, 8);
  assert.equal(council.passRate, 0.8);
  assert.ok(council.low < 0.8 && council.high > 0.8);
  assert.ok(Math.abs(council.usd - 3) < 1e-9);
  assert.ok(Math.abs(council.usdPerSolved! - 3 / 8) < 1e-9);
  assert.equal(council.medianWallMs, 5500);
  assert.deepEqual(
    report.pairs.map(({ a, b, onlyA, onlyB }) => ({ a, b, onlyA, onlyB })),
    [{ a: "council", b: "solo:a", onlyA: 4, onlyB: 0 }],
  );
  assert.match(report.verdict, /^No clear difference: council solved 80 %, solo:a 40 %/);
});

Deno.test("the council is paired with the best solo arm and each best-of arm", () => {
  const report = buildReport(["council", "solo:a", "solo:b", "best-of:a:3"], [
    ...results("council", TASKS, TASKS),
    ...results("solo:a", TASKS.slice(0, 2), TASKS),
    ...results("solo:b", TASKS.slice(0, 3), TASKS),
    ...results("best-of:a:3", [], TASKS),
  ]);
  assert.deepEqual(report.pairs.map((p) => [p.a, p.b, p.onlyA, p.onlyB]), [
    ["council", "solo:b", 7, 0],
    ["council", "best-of:a:3", 10, 0],
  ]);
  assert.match(report.verdict, /^council beats solo:b on these tasks: 100 % vs 30 % solved/);
  const none = buildReport(["solo:a"], results("solo:a", [], TASKS));
  assert.equal(none.arms[0].usdPerSolved, null);
  assert.deepEqual(none.pairs, []);
  assert.match(none.verdict, /No council and single arm to compare/);
});

Deno.test("Markdown and HTML carry the verdict, the tables and an inline chart, names escaped", () => {
  const report = buildReport(["council", "solo:<b>"], [
    ...results("council", TASKS, TASKS),
    ...results("solo:<b>", [], TASKS),
  ]);
  const markdown = reportMarkdown(report);
  assert.match(markdown, /\*\*Verdict:\*\* council beats solo:<b>/);
  assert.match(markdown, /\| council \| 10 \| 10 \| 100 % \(72 %–100 %\)/);
  const html = reportHtml(report);
  assert.match(html, /<svg [^>]*role="img"/);
  assert.ok(!html.includes("solo:<b>"));
  assert.match(html, /solo:&#60;b&#62;/);
  assert.ok(!/<script|src=|href=/.test(html), "self-contained");
});
