/**
 * What a benchmark scenario is: a named unit that `main.ts` runs on request and that returns
 * figures for the shared table. A new scenario is one file exporting a `Scenario`, added to the
 * list in `main.ts`.
 */
import type { Figure } from "./results.ts";

export interface BenchContext {
  /** `--quick`: fewer runs, for a smoke check of the harness (figures are less stable). */
  quick: boolean;
  /** The repository root (where deno.json is). */
  repoRoot: string;
  /** A scratch directory for this bench run, removed at the end. */
  tempDir: string;
  /** Extra `deno run` flags for the gateway (e.g. `--cpu-prof` from `--cpu-prof-dir`). */
  gatewayFlags: string[];
  /** `--compare DIR`: another checkout whose gateway runs side by side (scenarios that can). */
  compareRoot?: string;
  /** A progress line on stderr. */
  log(line: string): void;
}

export interface ScenarioResult {
  figures: Figure[];
  /** Extra raw numbers for results.json (not shown in the table). */
  details?: Record<string, unknown>;
  /** Tables of the scenario's own, printed after the figures table. */
  tables?: string[];
}

export interface Scenario {
  /** The `--only` name. */
  name: string;
  /** One line for `--help`. */
  description: string;
  run(context: BenchContext): Promise<ScenarioResult>;
}

/** Picks `full` normally and `quick` under `--quick`. */
export function runs(context: BenchContext, full: number, quick: number): number {
  return context.quick ? quick : full;
}
