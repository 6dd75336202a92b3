/** The eval's report as one self-contained HTML page: the tables and an inline SVG chart. */
import type { ArmSummary, Report } from "./report.ts";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const percent = (rate: number) => `${Math.round(rate * 100)} %`;
const dollars = (usd: number | null) => usd === null ? "—" : `$${usd.toFixed(2)}`;

const ROW = 34;
const LABEL = 170;
const BAR = 380;

/** Pass rate per arm as a bar with its 95 % interval as a whisker. */
export function passRateChart(arms: readonly ArmSummary[]): string {
  const height = arms.length * ROW + 30;
  const x = (rate: number) => LABEL + rate * BAR;
  const rows = arms.map((a, i) => {
    const y = i * ROW + 8;
    const mid = y + 11;
    return `<text x="${LABEL - 8}" y="${mid + 4}" text-anchor="end">${escapeHtml(a.arm)}</text>` +
      `<rect x="${LABEL}" y="${y}" width="${(a.passRate * BAR).toFixed(1)}" height="22" ` +
      `fill="#4f7cac"/>` +
      `<line x1="${x(a.low).toFixed(1)}" x2="${x(a.high).toFixed(1)}" y1="${mid}" y2="${mid}" ` +
      `stroke="#222" stroke-width="2"/>` +
      `<text x="${LABEL + BAR + 8}" y="${mid + 4}">${percent(a.passRate)}</text>`;
  });
  const axis = [0, 0.25, 0.5, 0.75, 1].map((t) =>
    `<line x1="${x(t)}" x2="${x(t)}" y1="0" y2="${height - 22}" stroke="#ddd"/>` +
    `<text x="${x(t)}" y="${height - 6}" text-anchor="middle">${percent(t)}</text>`
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${LABEL + BAR + 60}" ` +
    `height="${height}" font-family="sans-serif" font-size="12" role="img" ` +
    `aria-label="pass rate per arm with 95 % intervals">${axis.join("")}${rows.join("")}</svg>`;
}

/** The whole page. */
export function reportHtml(report: Report): string {
  const arms = report.arms.map((a) =>
    `<tr><td>${escapeHtml(a.arm)}</td><td>${a.runs}</td><td>${a.passed}</td>` +
    `<td>${percent(a.passRate)} (${percent(a.low)}–${percent(a.high)})</td>` +
    `<td>${dollars(a.usd)}</td><td>${dollars(a.usdPerSolved)}</td>` +
    `<td>${(a.medianWallMs / 1000).toFixed(1)} s</td></tr>`
  ).join("\n");
  const pairs = report.pairs.map((p) =>
    `<tr><td>${escapeHtml(p.a)}</td><td>${escapeHtml(p.b)}</td><td>${p.paired}</td>` +
    `<td>${p.onlyA}</td><td>${p.onlyB}</td><td>${p.p.toFixed(3)}</td></tr>`
  ).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Council eval</title>
<style>body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse;
margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,
th:first-child{text-align:left}.verdict{font-size:1.1em;font-weight:bold}</style></head>
<body><h1>Council eval</h1>
<p class="verdict">${escapeHtml(report.verdict)}</p>
${passRateChart(report.arms)}
<table><tr><th>arm</th><th>runs</th><th>passed</th><th>pass rate (95 % CI)</th><th>spend</th>
<th>$ per solved</th><th>median wall</th></tr>
${arms}
</table>
${
    pairs
      ? `<h2>Paired (same task and run)</h2><table><tr><th>A</th><th>B</th><th>paired</th>
<th>only A solved</th><th>only B solved</th><th>exact McNemar p</th></tr>
${pairs}
</table>`
      : ""
  }
</body></html>
`;
}
