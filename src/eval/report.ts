/**
 * The eval's report (pure): per arm the pass rate with its 95 % Wilson interval, spend per
 * solved task and median wall; the council against the best single arm, paired by task and run,
 * with the exact McNemar p; one plain verdict line; as data (`--json`) and as Markdown.
 */
import type { RunResult } from "./results.ts";
import { mcnemarExact, wilsonInterval } from "./stats.ts";
import { median } from "../base/median.ts";

export interface ArmSummary {
  arm: string;
  runs: number;
  passed: number;
  passRate: number;
  low: number;
  high: number;
  usd: number;
  /** Spend per solved task; null when none was solved. */
  usdPerSolved: number | null;
  medianWallMs: number;
}

export interface PairSummary {
  a: string;
  b: string;
  /** Paired runs (same task and run number) both arms have. */
  paired: number;
  onlyA: number;
  onlyB: number;
  p: number;
}

export interface Report {
  arms: ArmSummary[];
  pairs: PairSummary[];
  verdict: string;
}

/** What kind of arm a name is: a single member (solo, best-of) or a council. */
export function isSingleArm(arm: string): boolean {
  return arm.startsWith("solo:") || arm.startsWith("best-of:");
}

export function summarizeArm(arm: string, runs: readonly RunResult[]): ArmSummary {
  const passed = runs.filter((r) => r.passed).length;
  const usd = runs.reduce((sum, r) => sum + r.usd, 0);
  const { low, high } = wilsonInterval(passed, runs.length);
  return {
    arm,
    runs: runs.length,
    passed,
    passRate: runs.length ? passed / runs.length : 0,
    low,
    high,
    usd,
    usdPerSolved: passed ? usd / passed : null,
    medianWallMs: median(runs.map((r) => r.wallMs)) ?? 0,
  };
}

/** A against B on the runs both have (same task, same run number). */
export function pairArms(a: string, b: string, results: readonly RunResult[]): PairSummary {
  const outcome = (arm: string) =>
    new Map(results.filter((r) => r.arm === arm).map((r) => [`${r.task}\n${r.run}`, r.passed]));
  const ofA = outcome(a);
  const ofB = outcome(b);
  let paired = 0, onlyA = 0, onlyB = 0;
  for (const [key, passedA] of ofA) {
    const passedB = ofB.get(key);
    if (passedB === undefined) continue;
    paired++;
    if (passedA && !passedB) onlyA++;
    if (passedB && !passedA) onlyB++;
  }
  return { a, b, paired, onlyA, onlyB, p: mcnemarExact(onlyA, onlyB) };
}

/** The single arm with the most passes (ties: the cheaper). */
function bestSingle(arms: readonly ArmSummary[]): ArmSummary | undefined {
  return arms.filter((a) => a.arm.startsWith("solo:")).sort((x, y) =>
    y.passRate - x.passRate || x.usd - y.usd
  )[0];
}

const percent = (rate: number) => `${Math.round(rate * 100)} %`;
const dollars = (usd: number | null) => usd === null ? "—" : `$${usd.toFixed(2)}`;

/** The plain verdict on the first pair (a council against the best single arm). */
export function verdictLine(arms: readonly ArmSummary[], pairs: readonly PairSummary[]): string {
  const pair = pairs[0];
  if (!pair) {
    return arms.length
      ? "No council and single arm to compare: run a council arm and a solo:<agent> arm."
      : "No finished runs yet.";
  }
  const a = arms.find((x) => x.arm === pair.a)!;
  const b = arms.find((x) => x.arm === pair.b)!;
  const cost = `(${dollars(a.usdPerSolved)} vs ${dollars(b.usdPerSolved)} per solved task)`;
  const p = `p = ${pair.p.toFixed(3)}`;
  if (pair.p >= 0.05) {
    return `No clear difference: ${a.arm} solved ${percent(a.passRate)}, ${b.arm} ` +
      `${
        percent(b.passRate)
      } (${pair.onlyA} vs ${pair.onlyB} tasks only one solved, ${p}) ${cost}.`;
  }
  const [winner, loser] = pair.onlyA > pair.onlyB ? [a, b] : [b, a];
  return `${winner.arm} beats ${loser.arm} on these tasks: ${percent(winner.passRate)} vs ` +
    `${percent(loser.passRate)} solved (${p}) ${cost}.`;
}

/** The report of the results, arms in the order given. */
export function buildReport(armNames: readonly string[], results: readonly RunResult[]): Report {
  const names = [...new Set([...armNames, ...results.map((r) => r.arm)])];
  const arms = names.map((arm) => summarizeArm(arm, results.filter((r) => r.arm === arm)))
    .filter((a) => a.runs > 0);
  const best = bestSingle(arms);
  const pairs: PairSummary[] = [];
  for (const council of arms.filter((a) => !isSingleArm(a.arm))) {
    if (best) pairs.push(pairArms(council.arm, best.arm, results));
    for (const bestOf of arms.filter((a) => a.arm.startsWith("best-of:"))) {
      pairs.push(pairArms(council.arm, bestOf.arm, results));
    }
  }
  return { arms, pairs, verdict: verdictLine(arms, pairs) };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The report as Markdown. */
export function reportMarkdown(report: Report): string {
  const lines = [
    "# Council eval",
    "",
    `**Verdict:** ${report.verdict}`,
    "",
    "| arm | runs | passed | pass rate (95 % CI) | spend | $ per solved | median wall |",
    "|---|---:|---:|---|---:|---:|---:|",
    ...report.arms.map((a) =>
      `| ${a.arm} | ${a.runs} | ${a.passed} | ${percent(a.passRate)} ` +
      `(${percent(a.low)}–${percent(a.high)}) | ${dollars(a.usd)} | ${dollars(a.usdPerSolved)} ` +
      `| ${seconds(a.medianWallMs)} |`
    ),
  ];
  if (report.pairs.length) {
    lines.push(
      "",
      "## Paired (same task and run)",
      "",
      "| A | B | paired | only A solved | only B solved | exact McNemar p |",
      "|---|---|---:|---:|---:|---:|",
      ...report.pairs.map((p) =>
        `| ${p.a} | ${p.b} | ${p.paired} | ${p.onlyA} | ${p.onlyB} | ${p.p.toFixed(3)} |`
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}
