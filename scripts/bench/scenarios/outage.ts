/**
 * The outage bench: the first turn of a vendor outage on a fresh gateway (a state directory of
 * its own, so no health or lateness is known), against the same turn on a fresh gateway whose
 * council lacks that member. The latency bench's fake vendor and members (HTTP, and the real CLIs
 * when installed; `LATENCY_MEMBERS` as there), the gateway's defaults (isolation on, warm pool as
 * shipped), the host naming a git project. Outages: the OpenAI-speaking member failing with 500,
 * the Gemini one with 503, the Anthropic one (also the synthesizer) with 529 overloaded, every
 * model request, in each vendor's error envelope (`OUTAGES=codex,gemini,…` picks some). Answer
 * and action turns, the pair's order alternating, both turns of a pair with the same model latency
 * draws; `OUTAGE_RUNS=N` pairs per outage and kind (default 3), each on fresh gateways; the
 * median of the pairs' ratios against the 1.3 × target.
 */
import { join } from "node:path";
import type { TurnKind } from "./realchain.ts";
import { latencyAnswer, memberSets, sendTurn } from "./latency.ts";
import { gitRepo } from "../../../tests/support/git_repos.ts";
import { startGateway } from "../processes.ts";
import type { Figure } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";
import { KEY_VARIABLE, type Member, profilesByCaller } from "../latency/profiles.ts";
import {
  callerOf,
  outageCouncils,
  outageReport,
  outageRule,
  type OutageState,
  type PairSample,
  selectedOutages,
} from "../latency/outage.ts";
import {
  type FakeVendor,
  type LatencyProfile,
  startFakeVendor,
} from "../../../tests/support/fake_vendor/mod.ts";

const KINDS: readonly TurnKind[] = ["answer", "action"];

interface Bench {
  context: BenchContext;
  vendor: FakeVendor;
  project: string;
  problems: string[];
}

let stateDirs = 0;

/** One turn on a fresh gateway with `config`: its wall and first answer, in ms. */
async function firstTurn(
  bench: Bench,
  config: Record<string, unknown>,
  kind: TurnKind,
  run: number,
  label: string,
  /** What a failed turn counts as: unbounded with the member down, left out without it. */
  failedAs: number,
) {
  // A state directory of its own: the gateway knows no agent's health or lateness.
  Deno.env.set("XDG_STATE_HOME", join(bench.context.tempDir, `outage-state-${++stateDirs}`));
  const gateway = await startGateway(bench.context, config);
  try {
    const { sample, error } = await sendTurn(
      gateway.origin,
      kind,
      run,
      bench.vendor,
      bench.project,
    );
    bench.context.log(
      `outage ${label} ${kind} ${run + 1}: wall ${(sample.wallMs / 1000).toFixed(2)} s, first ` +
        `${(sample.firstMs / 1000).toFixed(2)} s${error ? `; ${error}` : ""}`,
    );
    if (error) bench.problems.push(`${label}, ${kind} turn: ${error}`);
    return error ? { wallMs: failedAs, firstMs: failedAs } : sample;
  } finally {
    await gateway.stop();
  }
}

/** Every outage of one member set: interleaved pairs of first turns, per kind. */
async function measureSet(bench: Bench, set: string, members: Member[], state: OutageState) {
  const count = runs(bench.context, Number(Deno.env.get("OUTAGE_RUNS")) || 3, 1);
  const outages = selectedOutages(members, Deno.env.get("OUTAGES"));
  const rows = outages.flatMap(({ member, outage }) =>
    KINDS.map((kind) => ({
      label: `${member.name} ${outage.status}`,
      kind,
      member,
      outage,
      samples: [] as PairSample[],
    }))
  );
  for (let run = 0; run < count; run++) {
    for (const [i, row] of rows.entries()) {
      const councils = outageCouncils(members, row.member);
      state.down = { caller: callerOf(row.member, set === "CLI"), outage: row.outage };
      // Both turns of a pair get the same model latencies (the same draws from the fake), so
      // their ratio is the gateway's; the draws differ from pair to pair.
      const seed = 29 + 1000 * run + i;
      const measure = (which: "with" | "without") => {
        bench.vendor.reseed(seed);
        const label = `${set} ${row.label} ${which}`;
        return firstTurn(
          bench,
          councils[which],
          row.kind,
          run,
          label,
          which === "with" ? Infinity : NaN,
        );
      };
      // The pair's order alternates, so neither side always runs on a machine just warmed.
      const withFirst = (run + i) % 2 === 0;
      const a = await measure(withFirst ? "with" : "without");
      const b = await measure(withFirst ? "without" : "with");
      const [down, healthy] = withFirst ? [a, b] : [b, a];
      row.samples.push({
        withMs: down.wallMs,
        withoutMs: healthy.wallMs,
        withFirstMs: down.firstMs,
        withoutFirstMs: healthy.firstMs,
      });
    }
  }
  state.down = undefined;
  return outageReport(set, rows);
}

export const outage: Scenario = {
  name: "outage",
  description: "first turn of a vendor outage vs the turn without that member, fake vendor " +
    "with model-like latency (HTTP members; real CLIs when installed)",
  async run(context) {
    Deno.env.set(KEY_VARIABLE, "outage");
    const userState = Deno.env.get("XDG_STATE_HOME");
    const profiles: Record<string, LatencyProfile> = {};
    const state: OutageState = {};
    const vendor = startFakeVendor({
      seed: 29,
      answer: (request) => latencyAnswer(request),
      profiles,
      rules: [outageRule(state)],
    });
    const project = join(context.tempDir, "outage-project");
    await Deno.mkdir(project, { recursive: true });
    await gitRepo(project, { "notes.md": "# Notes\n\nThe build runs with deno tasks.\n" });
    const bench: Bench = { context, vendor, project, problems: [] };
    const tables: string[] = [];
    const figures: Figure[] = [];
    try {
      for (const [set, members] of await memberSets(context, vendor.origin)) {
        Object.assign(profiles, profilesByCaller(members));
        const report = await measureSet(bench, set, members, state);
        tables.push(report.table);
        figures.push(...report.figures);
      }
    } finally {
      await vendor.close();
      Deno.env.delete(KEY_VARIABLE);
      if (userState === undefined) Deno.env.delete("XDG_STATE_HOME");
      else Deno.env.set("XDG_STATE_HOME", userState);
    }
    const { problems } = bench;
    if (problems.length && figures.length) {
      figures[0].note += `; ${problems.length} failed turns: ${problems[0]}`;
    }
    const calls = vendor.requests.map((r) => ({
      caller: r.caller,
      status: r.status,
      arrivedAt: r.arrivedAt,
      ms: r.repliedAt - r.arrivedAt,
    }));
    return { figures, tables, details: { problems, calls } };
  },
};
