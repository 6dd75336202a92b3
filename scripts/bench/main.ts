/**
 * `deno task bench`: runs the named benchmark scenarios against the real gateway (a subprocess
 * with fake children), prints the figures table and writes `bench/results.json`.
 *
 *   deno task bench [--quick] [--only name[,name…]] [--out FILE] (see --help)
 *
 * A scenario is a `Scenario` (see scenario.ts) in the SCENARIOS list below; add a new one there.
 */
import { parseArgs } from "node:util";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describeMachine, machineInfo } from "./machine.ts";
import { type Figure, figuresTable, missedTargets } from "./results.ts";
import type { BenchContext, Scenario } from "./scenario.ts";
import { concurrency } from "./scenarios/concurrency.ts";
import { footprint } from "./scenarios/footprint.ts";
import { latency } from "./scenarios/latency.ts";
import { load } from "./scenarios/load.ts";
import { outage } from "./scenarios/outage.ts";
import { overhead } from "./scenarios/overhead.ts";
import { parallel } from "./scenarios/parallel.ts";
import { passthrough } from "./scenarios/passthrough.ts";
import { realchain } from "./scenarios/realchain.ts";
import { session } from "./scenarios/session.ts";
import { team } from "./scenarios/team.ts";
import { utility } from "./scenarios/utility.ts";
import { worktree } from "./scenarios/worktree.ts";

export const SCENARIOS: readonly Scenario[] = [
  realchain,
  parallel,
  overhead,
  passthrough,
  concurrency,
  footprint,
  utility,
];

/** Scenarios run only when `--only` names them (e.g. they need an npm install). */
export const OPT_IN_SCENARIOS: readonly Scenario[] = [
  latency,
  outage,
  load,
  worktree,
  session,
  team,
];

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function usage(): string {
  return [
    "Usage: deno task bench [options]",
    "",
    "  --quick                 fewer runs (a smoke check; figures are less stable)",
    "  --only NAMES            run only these scenarios (comma-separated)",
    "  --out FILE              where to write the results (default bench/results.json)",
    "  --cpu-prof-dir DIR      run each gateway with --cpu-prof, profiles written to DIR",
    "  --compare DIR           also run DIR's gateway (another checkout) side by side, where",
    "                          the scenario supports it (realchain)",
    '  --gateway-flags="FLAGS" extra `deno run` flags for the gateway, e.g.',
    '                          "--v8-flags=--max-semi-space-size=2"',
    "  --keep-logs             keep the scratch directory (gateway configs and logs)",
    "",
    "Scenarios:",
    ...SCENARIOS.map((s) => `  ${s.name.padEnd(12)} ${s.description}`),
    ...OPT_IN_SCENARIOS.map((s) => `  ${s.name.padEnd(12)} ${s.description} (only with --only)`),
    "",
  ].join("\n");
}

/**
 * Picks the scenarios named by `--only` (all of `all` when empty; `optIn` ones only by name);
 * throws on an unknown name.
 */
export function selectScenarios(
  all: readonly Scenario[],
  only: string | undefined,
  optIn: readonly Scenario[] = [],
): Scenario[] {
  if (!only) return [...all];
  const known = [...all, ...optIn];
  const names = only.split(",").map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !known.some((s) => s.name === n));
  if (unknown.length) {
    throw new Error(
      `unknown scenario ${unknown.join(", ")} (known: ${known.map((s) => s.name).join(", ")})`,
    );
  }
  return known.filter((s) => names.includes(s.name));
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      out: { type: "string" },
      "cpu-prof-dir": { type: "string" },
      "gateway-flags": { type: "string" },
      compare: { type: "string" },
      "keep-logs": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(usage());
    return 0;
  }
  let selected: Scenario[];
  try {
    selected = selectScenarios(SCENARIOS, values.only, OPT_IN_SCENARIOS);
  } catch (err) {
    console.error(`bench: ${(err as Error).message}`);
    return 2;
  }
  const machine = machineInfo();
  const log = (line: string) => console.error(`[bench] ${line}`);
  log(`machine: ${describeMachine(machine)}`);
  const tempDir = await Deno.makeTempDir({ prefix: "council-bench-" });
  const profiles = values["cpu-prof-dir"];
  const context: BenchContext = {
    quick: values.quick,
    repoRoot: REPO_ROOT,
    tempDir,
    gatewayFlags: [
      ...(profiles ? ["--cpu-prof", `--cpu-prof-dir=${resolve(profiles)}`] : []),
      ...(values["gateway-flags"]?.split(/\s+/).filter(Boolean) ?? []),
    ],
    compareRoot: values.compare ? resolve(values.compare) : undefined,
    log,
  };
  const figures: Figure[] = [];
  const details: Record<string, unknown> = {};
  const tables: string[] = [];
  const failures: string[] = [];
  const started = performance.now();
  try {
    for (const scenario of selected) {
      log(`scenario ${scenario.name}: ${scenario.description}`);
      const t0 = performance.now();
      try {
        const result = await scenario.run(context);
        figures.push(...result.figures);
        if (result.details) details[scenario.name] = result.details;
        tables.push(...(result.tables ?? []));
      } catch (err) {
        failures.push(`${scenario.name}: ${(err as Error).message}`);
        log(`scenario ${scenario.name} FAILED: ${(err as Error).stack ?? err}`);
      }
      log(`scenario ${scenario.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    if (values["keep-logs"]) log(`gateway configs and logs kept in ${tempDir}`);
    else await Deno.remove(tempDir, { recursive: true }).catch(() => {});
  }
  const seconds = (performance.now() - started) / 1000;

  console.log(`\nCouncil Gateway benchmarks${values.quick ? " (--quick)" : ""}`);
  console.log(`${describeMachine(machine)}; ${seconds.toFixed(0)} s`);
  if (context.gatewayFlags.length) console.log(`gateway flags: ${context.gatewayFlags.join(" ")}`);
  console.log();
  console.log(figuresTable(figures));
  for (const table of tables) console.log(`\n${table}`);
  const notes = figures.filter((f) => f.note);
  if (notes.length) {
    console.log("\nNotes:");
    for (const f of notes) console.log(`- ${f.name}: ${f.note}`);
  }
  const missed = missedTargets(figures);
  if (missed.length) console.log(`\nMissed targets: ${missed.map((f) => f.name).join("; ")}`);
  if (failures.length) console.log(`\nFailed scenarios:\n${failures.join("\n")}`);

  const out = values.out ?? join(REPO_ROOT, "bench", "results.json");
  await Deno.mkdir(dirname(out), { recursive: true });
  await Deno.writeTextFile(
    out,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        quick: values.quick,
        gatewayFlags: context.gatewayFlags,
        seconds: Math.round(seconds),
        machine: { ...machine, loadAverageAtEnd: machineInfo().loadAverage },
        figures,
        failures,
        details,
      },
      null,
      2,
    ) + "\n",
  );
  console.log(`\nwritten ${out}`);
  // A target is a limit: a missed one fails the run, as does a scenario that could not run.
  // (Figures kept for information carry a `reference` instead, which never fails.)
  return failures.length || missed.length ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
