/**
 * The real-chain bench's printed table: for one kind of turn, the median over runs of the turn's
 * wall, the gateway's share, and each CLI process's start-up, model time and exit tail, one
 * column per gateway compared. Pure functions only.
 */
import { formatNumber, formatTable, quantile } from "../results.ts";
import type { TurnTimeline } from "./timeline.ts";

/** The timelines of one gateway (a column) for one kind of turn. */
export interface Column {
  label: string;
  timelines: TurnTimeline[];
}

const PARTS = [
  // "start": the spawn, or for a pooled process the moment it could get its prompt.
  ["start → first request", "firstRequestMs"],
  ["model", "modelMs"],
  ["exit tail", "tailMs"],
  ["wall", "wallMs"],
] as const;

function ms(value: number): string {
  return Number.isFinite(value) ? `${formatNumber(value)} ms` : "–";
}

/** The median of `pick` over the timelines (NaNs left out). */
export function median(timelines: readonly TurnTimeline[], pick: (t: TurnTimeline) => number) {
  return quantile(timelines.map(pick).filter(Number.isFinite), 0.5);
}

/** The process labels in the order first seen (children by start, the synthesizer last). */
function labelsOf(columns: readonly Column[]): string[] {
  const labels = new Set<string>();
  for (const column of columns) {
    for (const timeline of column.timelines) {
      for (const p of timeline.processes) if (p.label !== "synth") labels.add(p.label);
    }
  }
  return [...[...labels].sort(), "synth"];
}

type Field = typeof PARTS[number][1] | "requests" | "failedRequests";

function processValue(timeline: TurnTimeline, label: string, field: Field) {
  return timeline.processes.find((p) => p.label === label)?.[field] ?? NaN;
}

/** The gateway's share of a turn, in percent. */
export function sharePercent(timeline: TurnTimeline): number {
  return (100 * timeline.gatewayMs) / timeline.wallMs;
}

/**
 * One table: rows are the turn's parts, columns the gateways, medians in the cells; walls also as
 * a ratio to the `base` column's (default: the last).
 */
export function turnTable(columns: readonly Column[], base = columns.length - 1): string {
  const rows: string[][] = [];
  const row = (name: string, cell: (c: Column) => string) =>
    rows.push([name, ...columns.map(cell)]);
  row("runs", (c) => String(c.timelines.length));
  row("turn wall", (c) => ms(median(c.timelines, (t) => t.wallMs)));
  if (columns.length > 1) {
    const baseWall = median(columns[base].timelines, (t) => t.wallMs);
    row(
      `turn wall ÷ ${columns[base].label}`,
      (c) => formatNumber(median(c.timelines, (t) => t.wallMs) / baseWall),
    );
  }
  row("gateway share", (c) => {
    const gateway = median(c.timelines, (t) => t.gatewayMs);
    return `${ms(gateway)} (${formatNumber(median(c.timelines, sharePercent))} %)`;
  });
  row("gateway share, worst turn", (c) => ms(Math.max(...c.timelines.map((t) => t.gatewayMs))));
  row("  of which: request → first spawn", (c) => ms(median(c.timelines, (t) => t.leadMs)));
  row(
    "  of which: children done → synth spawn",
    (c) => ms(median(c.timelines, (t) => t.handoffMs)),
  );
  row("  of which: last exit → end of reply", (c) => ms(median(c.timelines, (t) => t.closeMs)));
  for (const label of labelsOf(columns)) {
    for (const [name, field] of PARTS) {
      row(
        `${label}: ${name}`,
        (c) => ms(median(c.timelines, (t) => processValue(t, label, field))),
      );
    }
    row(`${label}: requests (failed)`, (c) => {
      const count = (field: Field) => median(c.timelines, (t) => processValue(t, label, field));
      return `${formatNumber(count("requests"))} (${formatNumber(count("failedRequests"))})`;
    });
  }
  return formatTable(["Median per turn", ...columns.map((c) => c.label)], rows);
}
