/**
 * The benchmark's shared results model: samples summarised as median/p99, figures that pair a
 * gateway measurement with its baseline and target, and the printed table. Pure functions only.
 */

/** Median, p99 and friends of a set of samples. */
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) by linear interpolation between closest ranks (numpy's default):
 * position q·(n−1) in the sorted samples. NaN for no samples.
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const position = Math.min(1, Math.max(0, q)) * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  return {
    n,
    p50: quantile(samples, 0.5),
    p99: quantile(samples, 0.99),
    min: n ? Math.min(...samples) : NaN,
    max: n ? Math.max(...samples) : NaN,
    mean: n ? samples.reduce((a, b) => a + b, 0) / n : NaN,
  };
}

/** A measured value: a distribution, or one number (a count, a throughput, a memory size). */
export type Measured = Summary | number;

export function isSummary(value: Measured): value is Summary {
  return typeof value === "object";
}

/** A target checked against the gateway's value. */
export interface Target {
  /** As the issue states it, e.g. "≤ 5 ms p50". */
  text: string;
  pass: boolean;
}

/** One row of the table. */
export interface Figure {
  /** The scenario that produced it (its `--only` name). */
  scenario: string;
  name: string;
  unit: string;
  gateway: Measured;
  baseline?: { label: string; value: Measured };
  target?: Target;
  /**
   * A bound the figure was once held to, shown for information only: it never fails a run.
   * (Micro figures of the gateway's own milliseconds; the figure of record is the real chain.)
   */
  reference?: string;
  note?: string;
}

/** Builds a target from a comparison; `value` NaN (nothing measured) fails. */
export function target(text: string, value: number, limit: number): Target {
  return { text, pass: Number.isFinite(value) && value <= limit };
}

/** A number for the table: 3 significant digits below 100, whole numbers above. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "–";
  const abs = Math.abs(value);
  if (abs >= 100 || Number.isInteger(value)) return Math.round(value).toString();
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** `p50 / p99` of a summary, or the single number. */
export function formatMeasured(value: Measured | undefined, unit: string): string {
  if (value === undefined) return "";
  const text = isSummary(value)
    ? `${formatNumber(value.p50)} / ${formatNumber(value.p99)}`
    : formatNumber(value);
  return unit ? `${text} ${unit}` : text;
}

export const TABLE_HEADER = [
  "Figure",
  "Gateway (p50 / p99)",
  "Baseline (p50 / p99)",
  "Target",
  "Result",
] as const;

/** One row of cells for a figure. */
export function figureCells(figure: Figure): string[] {
  const baseline = figure.baseline
    ? `${formatMeasured(figure.baseline.value, figure.unit)} (${figure.baseline.label})`
    : "";
  return [
    figure.name,
    formatMeasured(figure.gateway, figure.unit),
    baseline,
    figure.target?.text ?? (figure.reference ? `(${figure.reference})` : ""),
    figure.target ? (figure.target.pass ? "ok" : "MISSED") : figure.reference ? "info" : "",
  ];
}

/** A Markdown table (GitHub flavour), columns padded so it also reads as plain text. */
export function formatTable(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (c ?? "").padEnd(widths[i])).join(" | ")} |`;
  return [
    line(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map(line),
  ].join("\n");
}

/** The figures as the printed table. */
export function figuresTable(figures: readonly Figure[]): string {
  return formatTable(TABLE_HEADER, figures.map(figureCells));
}

/** Figures whose target was missed. */
export function missedTargets(figures: readonly Figure[]): Figure[] {
  return figures.filter((f) => f.target && !f.target.pass);
}
