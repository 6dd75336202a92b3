/**
 * Each real CLI's start-up, measured without the gateway (`--only clistart`):
 *
 * - Switches: spawn → first upstream request and spawn → exit with none of the candidate
 *   start-up switches, with each one alone, and with what the adapter ships, interleaved.
 * - Pre-start: whether a CLI does its start-up work before it reads stdin. The prompt is written
 *   at once (cold) or after the CLI has sat started for a while (pre-started); if the start-up
 *   work came first, prompt → first request is much shorter than cold spawn → first request.
 *   Also what such an idle started CLI costs (its process group's RSS, PSS and CPU so far).
 *
 * `CLISTART_VENDORS=claude,codex` measures only those CLIs; `CLISTART_RUNS=N` sets the number of
 * rounds (default 8), for effects smaller than the run-to-run spread.
 */
import { join } from "node:path";
import { formatNumber, formatTable, quantile } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";
import { findClis, prepareHome } from "../realchain/clis.ts";
import {
  adapterInvocation,
  bareInvocation,
  BENCH_COMPILE_CACHE,
  type DirectRun,
  runDirect,
  type Switch,
} from "../realchain/direct_cli.ts";
import { startChainStub, type Vendor } from "../realchain/upstream.ts";

/** Candidate start-up switches per CLI: each meant to cut start-up without changing answers. */
export const SWITCHES: Readonly<Record<Vendor, Switch[]>> = {
  claude: [
    { label: "DISABLE_AUTOUPDATER=1", env: { DISABLE_AUTOUPDATER: "1" } },
    {
      label: "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
      env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
    },
    { label: "DISABLE_TELEMETRY=1", env: { DISABLE_TELEMETRY: "1" } },
    { label: "DISABLE_ERROR_REPORTING=1", env: { DISABLE_ERROR_REPORTING: "1" } },
    {
      label: "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
      env: { CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: "1" },
    },
  ],
  codex: [
    { label: "-c analytics.enabled=false", args: ["-c", "analytics.enabled=false"] },
    {
      label: "-c check_for_update_on_startup=false",
      args: ["-c", "check_for_update_on_startup=false"],
    },
    {
      label: "-c features.plugins=false -c features.apps=false",
      args: ["-c", "features.plugins=false", "-c", "features.apps=false"],
    },
  ],
  gemini: [
    { label: "GEMINI_CLI_NO_RELAUNCH=true", env: { GEMINI_CLI_NO_RELAUNCH: "true" } },
    {
      label: "NODE_COMPILE_CACHE=<dir> (Node 22+)",
      env: { NODE_COMPILE_CACHE: BENCH_COMPILE_CACHE },
    },
  ],
};

const PROMPT = "=== Your task ===\nSay hello to the start-up measurement.";

interface Condition {
  vendor: Vendor;
  label: string;
  invocation: { args: string[]; env: Record<string, string> };
  runs: DirectRun[];
}

function med(values: number[]): number {
  return quantile(values.filter(Number.isFinite), 0.5);
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${formatNumber(value)} ms` : "–";
}

function signedMs(value: number): string {
  return `${value > 0 ? "+" : ""}${ms(value)}`;
}

function conditionsFor(vendor: Vendor, origin: string, home: string): Condition[] {
  const shipped = adapterInvocation(vendor, origin, home);
  const bare = bareInvocation(shipped, SWITCHES[vendor]);
  const withSwitch = (s: Switch) => {
    const base = adapterInvocation(vendor, origin, home, s.args ?? []);
    const stripped = bareInvocation(base, SWITCHES[vendor].filter((o) => o !== s));
    return { args: stripped.args, env: { ...stripped.env, ...s.env } };
  };
  return [
    { vendor, label: "none", invocation: bare, runs: [] },
    ...SWITCHES[vendor].map((s) => ({
      vendor,
      label: s.label,
      invocation: withSwitch(s),
      runs: [],
    })),
    { vendor, label: "as the adapter ships it", invocation: shipped, runs: [] },
  ];
}

function switchesTable(conditions: Condition[]): string {
  const rows = conditions.map((c) => {
    const none = conditions.find((o) => o.vendor === c.vendor && o.label === "none")!;
    const first = med(c.runs.map((r) => r.firstRequestMs));
    const delta = first - med(none.runs.map((r) => r.firstRequestMs));
    return [
      c.vendor,
      c.label,
      ms(first),
      c.label === "none" ? "" : signedMs(delta),
      ms(med(c.runs.map((r) => r.exitMs))),
      ms(med(c.runs.map((r) => r.cpuMs))),
      c.label === "none"
        ? ""
        : `${signedMs(med(c.runs.map((r) => r.cpuMs)) - med(none.runs.map((r) => r.cpuMs)))}`,
      `${c.runs.filter((r) => r.exitCode !== 0).length}/${c.runs.length}`,
    ];
  });
  return formatTable(
    [
      "CLI",
      "Switch",
      "spawn → first request",
      "Δ vs none",
      "spawn → exit",
      "CPU (user + sys)",
      "Δ CPU vs none",
      "failed",
    ],
    rows,
  );
}

/** The pre-start variants: stdin left silent, or a newline written at spawn. */
const PRIMERS = [["silent stdin", ""], ["newline at spawn", "\n"]] as const;

type Warm = Map<string, DirectRun[]>;

function prestartTable(cold: Condition[], warm: Warm): string {
  const rows = cold.flatMap((c) =>
    PRIMERS.map(([label]) => {
      const pre = warm.get(`${c.vendor} ${label}`) ?? [];
      const ok = pre.filter((r) => !r.exitedEarly);
      const coldFirst = med(c.runs.map((r) => r.firstRequestMs));
      const warmFirst = med(ok.map((r) => r.firstRequestMs));
      const idle = (pick: (r: DirectRun) => number) => med(pre.map(pick));
      return [
        c.vendor,
        label,
        ms(coldFirst),
        ms(warmFirst),
        ok.length ? `${formatNumber(100 * (1 - warmFirst / coldFirst))} %` : "–",
        `${pre.length - ok.length}/${pre.length}`,
        `${formatNumber(idle((r) => r.idle?.rssMb ?? NaN))} / ${
          formatNumber(idle((r) => r.idle?.pssMb ?? NaN))
        } MB (${formatNumber(idle((r) => r.idle?.processes ?? NaN))} proc)`,
        ms(idle((r) => r.idle?.cpuMs ?? NaN)),
      ];
    })
  );
  return formatTable([
    "CLI",
    "pre-started with",
    "cold: spawn → first request",
    "pre-started: prompt → first request",
    "saved",
    "gone before the prompt",
    "idle RSS / PSS",
    "CPU used before the prompt",
  ], rows);
}

export const clistart: Scenario = {
  name: "clistart",
  description: "each real CLI alone: start-up switches, and whether pre-starting it helps",
  async run(context) {
    const { found, missing } = await findClis();
    if (missing.length) throw new Error(`CLIs missing (see .ci/run): ${missing.join("; ")}`);
    const stub = startChainStub();
    const home = join(context.tempDir, "clistart-home");
    await prepareHome(home);
    try {
      const only = Deno.env.get("CLISTART_VENDORS")?.split(",").map((v) => v.trim());
      const conditions = found
        .filter((cli) => !only || only.includes(cli.vendor))
        .flatMap((cli) => conditionsFor(cli.vendor, stub.origin, home));
      const pathOf = (vendor: Vendor) => found.find((c) => c.vendor === vendor)!.path;
      for (const c of conditions) {
        await runDirect(c.vendor, pathOf(c.vendor), c.invocation, stub, PROMPT);
      }
      const count = runs(context, Number(Deno.env.get("CLISTART_RUNS")) || 8, 1);
      for (let i = 0; i < count; i++) {
        for (const c of conditions) {
          c.runs.push(await runDirect(c.vendor, pathOf(c.vendor), c.invocation, stub, PROMPT));
        }
        context.log(`clistart switches ${i + 1}/${count}`);
      }
      const waitMs = runs(context, 6_000, 4_000);
      const shipped = conditions.filter((c) => c.label === "as the adapter ships it");
      const warm: Warm = new Map();
      const warmRuns = runs(context, 4, 1);
      for (let i = 0; i < warmRuns; i++) {
        for (const c of shipped) {
          for (const [label, primer] of PRIMERS) {
            const path = pathOf(c.vendor);
            const prestart = { waitMs, primer };
            const run = await runDirect(c.vendor, path, c.invocation, stub, PROMPT, prestart);
            const key = `${c.vendor} ${label}`;
            warm.set(key, [...(warm.get(key) ?? []), run]);
          }
        }
        context.log(`clistart pre-start ${i + 1}/${warmRuns}`);
      }
      return {
        figures: [],
        tables: [
          `CLI start-up switches, each CLI alone (median of ${count}):\n${
            switchesTable(conditions)
          }`,
          `Pre-starting a CLI: prompt written ${waitMs / 1000} s after the spawn (cold: ` +
          `median of ${count}; pre-started: median of ${warmRuns}):\n${
            prestartTable(shipped, warm)
          }`,
        ],
        details: { conditions, prestart: Object.fromEntries(warm) },
      };
    } finally {
      await stub.close();
    }
  },
};
