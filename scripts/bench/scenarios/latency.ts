/**
 * The latency bench: council turns against the fake vendor API answering at model-like speed
 * (latency/profiles.ts), with the gateway's defaults (isolation and warm pool as shipped) and a
 * state directory of its own (no lateness learned before the run). For HTTP members, and the
 * real CLIs when installed (`LATENCY_MEMBERS=http`, `cli`, or both by default), per turn kind
 * (answer, with the synthesizer writing or picking; action), interleaved in one run: each
 * member's solo wall and first answer, the council's, council / slowest solo, and the floor (the
 * slowest child the quorum waited for, plus the synthesizer's time to its first token).
 * `LATENCY_RUNS=N` turns per kind. With `--compare DIR`, DIR's gateway (an older checkout) runs
 * the same council turns interleaved. With CLI members, a session of answer turns follows, with
 * the warm pool and without (latency/session.ts).
 */
import { join } from "node:path";
import { chainTurnBody, type TurnKind } from "./realchain.ts";
import { gitRepo } from "../../../tests/support/git_repos.ts";
import { streamMessages } from "../client.ts";
import { startGateway } from "../processes.ts";
import { type Figure, formatNumber, formatTable, quantile } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";
import { findClis, prepareHome } from "../realchain/clis.ts";
import { measureSessions } from "../latency/session.ts";
import { isSynthesis } from "../latency/synthesis_calls.ts";
import {
  cliHome,
  cliMembers,
  httpMembers,
  KEY_VARIABLE,
  type Member,
  PROFILES,
  profilesByCaller,
} from "../latency/profiles.ts";
import {
  type Answer,
  type FakeVendor,
  type LatencyProfile,
  type RecordedRequest,
  startFakeVendor,
} from "../../../tests/support/fake_vendor/mod.ts";

/** What is measured: an action turn, and an answer turn whose synthesizer writes or picks. */
type Flavour = "write" | "pick" | "action";
const FLAVOURS: readonly Flavour[] = ["write", "pick", "action"];
const kindOf = (flavour: Flavour): TurnKind => (flavour === "action" ? "action" : "answer");

/**
 * The fake's script: drafts, tool proposals, a pick among proposals, and on an answer turn the
 * synthesizer's written answer or, when `pick`, its pick of the first candidate.
 */
export function latencyAnswer(request: RecordedRequest, pick = false): Answer | undefined {
  const prompt = request.prompt;
  if (prompt.includes("Proposed next steps")) return { json: { choose: 1 } };
  if (prompt.includes("Candidate replies")) return pick ? { json: { choose: "A" } } : undefined;
  if (prompt.includes("Tools the assistant may call")) {
    const input = { file_path: `/tmp/notes-${request.caller}.txt` };
    return { json: { kind: "tool", name: "Read", input } };
  }
  return undefined;
}

/**
 * One measured turn: wall, first answer (text or tool call); for council turns the floor and the
 * synthesizer's time to its first token (NaN otherwise).
 */
export interface Sample {
  wallMs: number;
  firstMs: number;
  floorMs: number;
  synthTtftMs: number;
}

const synthOf = (calls: readonly RecordedRequest[]) => calls.find(isSynthesis);

const isModelCall = (r: RecordedRequest) =>
  ["messages", "responses", "chat", "gemini"]
    .includes(r.api);

/**
 * The floor of a council turn from the fake's records: the last child reply the synthesizer
 * waited for, plus the synthesizer's time to its first token (NaN when no synthesizer ran).
 */
export function floorOf(calls: readonly RecordedRequest[], startedAt: number): number {
  const synth = synthOf(calls);
  if (!synth) return NaN;
  const children = calls.filter((r) =>
    r !== synth && isModelCall(r) && r.repliedAt <= synth.arrivedAt
  );
  const lastChild = Math.max(startedAt, ...children.map((r) => r.repliedAt));
  return lastChild - startedAt + (synth.firstTokenAt - synth.arrivedAt);
}

export async function sendTurn(
  origin: string,
  kind: TurnKind,
  run: number,
  vendor: FakeVendor,
  project: string,
) {
  const before = vendor.requests.length;
  const startedAt = performance.now();
  let first = NaN;
  const mark = () => (first = Number.isNaN(first) ? performance.now() - startedAt : first);
  const turn = await streamMessages(origin, chainTurnBody(kind, run, project), {
    onTextDelta: mark,
    onEvent(event) {
      if (event.data?.content_block?.type === "tool_use") mark();
    },
  });
  const calls = vendor.requests.slice(before);
  const synth = synthOf(calls);
  const sample = {
    wallMs: turn.wallMs,
    firstMs: first,
    floorMs: floorOf(calls, startedAt),
    synthTtftMs: synth ? synth.firstTokenAt - synth.arrivedAt : NaN,
  };
  return { sample, error: turn.error };
}

interface Variant {
  label: string;
  origin: string;
  stop(): Promise<void>;
  council: boolean;
  /** `--compare DIR`'s council: an older gateway, whose synthesizer always writes. */
  compared?: boolean;
  samples: Record<Flavour, Sample[]>;
}

/** Every member in one council, the first synthesizing; every turn fans out. */
const councilConfig = (members: Member[]) => ({
  fanOutPolicy: "always",
  councilSize: members.length,
  defaultAgents: members.map((m) => m.entry),
});

async function startVariants(context: BenchContext, set: string, members: Member[]) {
  const variants: Variant[] = [];
  const start = async (label: string, config: Record<string, unknown>, compared = false) => {
    const gateway = compared
      ? await startGateway({ ...context, repoRoot: context.compareRoot! }, config, {
        olderGateway: true,
      })
      : await startGateway(context, config);
    const council = config.fanOutPolicy === "always" && !compared;
    const samples = { write: [], pick: [], action: [] };
    variants.push({ label, ...gateway, council, compared, samples });
  };
  for (const member of members) {
    await start(`${set} ${member.name} alone`, {
      fanOutPolicy: "never",
      defaultAgents: [member.entry],
    });
  }
  await start(`${set} council`, councilConfig(members));
  if (context.compareRoot) {
    await start(`${set} council, compared checkout`, councilConfig(members), true);
  }
  return variants;
}

const p50 = (samples: Sample[], pick: (s: Sample) => number) =>
  quantile(samples.map(pick).filter(Number.isFinite), 0.5);
const seconds = (ms: number) => (Number.isFinite(ms) ? `${formatNumber(ms / 1000)} s` : "–");
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ×` : "–");

const TITLES: Record<Flavour, string> = {
  write: "answer turn, synthesizer writes",
  pick: "answer turn, synthesizer picks",
  action: "action turn",
};

/** The set's figures and table for one flavour: solos, council, ratios, floor. */
function report(set: string, flavour: Flavour, variants: Variant[]) {
  const council = variants.find((v) => v.council)!;
  const compared = variants.find((v) => v.compared);
  const solos = variants.filter((v) => !v.council && !v.compared);
  // Alone, a member answers by itself: its answer turns stand for both flavours.
  const solo = flavour === "action" ? "action" : "write";
  const slowest = Math.max(...solos.map((v) => p50(v.samples[solo], (s) => s.wallMs)));
  const slowestFirst = Math.max(...solos.map((v) => p50(v.samples[solo], (s) => s.firstMs)));
  const wall = p50(council.samples[flavour], (s) => s.wallMs);
  const first = p50(council.samples[flavour], (s) => s.firstMs);
  const floor = p50(council.samples[flavour], (s) => s.floorMs);
  const bound = slowest + p50(council.samples[flavour], (s) => s.synthTtftMs);
  const rows = variants.filter((v) => !(v.compared && flavour === "pick")).map((v) => {
    const samples = v.samples[v.council ? flavour : solo];
    return [
      v.label,
      seconds(p50(samples, (s) => s.wallMs)),
      seconds(p50(samples, (s) => s.firstMs)),
    ];
  });
  rows.push(
    ["council / slowest solo", times(wall / slowest), times(first / slowestFirst)],
    ["floor (slowest awaited child + synth TTFT)", seconds(floor), ""],
    ["council / floor", times(wall / floor), ""],
  );
  const table = `Latency, ${set} members, ${TITLES[flavour]} (p50 of ${
    council.samples[flavour].length
  } runs):\n${formatTable(["", "wall", "first answer"], rows)}`;
  const figure = (name: string, value: number, extra: Partial<Figure> = {}): Figure => ({
    scenario: "latency",
    name: `Latency (${set}), ${TITLES[flavour]}: ${name}`,
    unit: "×",
    gateway: value,
    ...extra,
  });
  const figures = [
    figure("council wall / slowest member alone", wall / slowest, {
      ...(flavour === "pick" ? { target: { text: "≤ 1.25 ×", pass: wall / slowest <= 1.25 } } : {}),
      note: `council ${seconds(wall)}, slowest alone ${seconds(slowest)}, floor ${seconds(floor)}`,
    }),
    ...(flavour === "action"
      ? [figure("council wall / (slowest alone + synthesizer's first token)", wall / bound, {
        target: { text: "≤ 1.1 ×", pass: wall / bound <= 1.1 },
      })]
      : []),
    figure("council wall / floor", wall / floor),
    ...(compared && flavour !== "pick" ? [comparedFigure(wall, compared.samples[solo])] : []),
    figure("council first answer / slowest member's", first / slowestFirst, {
      note: `council ${seconds(first)}, slowest alone ${seconds(slowestFirst)}`,
    }),
  ];
  return { table, figures };

  /** This council against the compared checkout's, the same turns (no slower than it was). */
  function comparedFigure(wall: number, samples: Sample[]): Figure {
    const before = p50(samples, (s) => s.wallMs);
    return figure("council wall / compared checkout's council wall", wall / before, {
      target: { text: "≤ 1.0 ×", pass: wall / before <= 1 },
      note: `council ${seconds(wall)}, compared ${seconds(before)}`,
    });
  }
}

/** Whether the synthesizer picks on answer turns (the bench sets it before each turn). */
const synthesis = { pick: false };

async function measure(
  context: BenchContext,
  variants: Variant[],
  vendor: FakeVendor,
  project: string,
) {
  const count = runs(context, Number(Deno.env.get("LATENCY_RUNS")) || 5, 1);
  const problems: string[] = [];
  for (let run = 0; run < count; run++) {
    for (const flavour of FLAVOURS) {
      for (const variant of variants) {
        // Alone, a member has no synthesizer: one answer turn serves both answer flavours.
        if (flavour === "pick" && !variant.council) continue;
        synthesis.pick = flavour === "pick";
        // Every variant's turn of this run and flavour gets the same model latencies (the fake's
        // draws are per caller), so the council and the compared checkout's differ by the
        // gateway alone, not by the draws' jitter.
        vendor.reseed(29 + 1000 * run + FLAVOURS.indexOf(flavour));
        const { sample, error } = await sendTurn(
          variant.origin,
          kindOf(flavour),
          run,
          vendor,
          project,
        );
        if (error) problems.push(`${variant.label}, ${flavour}: ${error}`);
        else variant.samples[flavour].push(sample);
        context.log(
          `latency ${variant.label} ${TITLES[flavour]} ${run + 1}/${count}: wall ` +
            `${seconds(sample.wallMs)}, first ${seconds(sample.firstMs)}${
              error ? `; ${error}` : ""
            }`,
        );
      }
    }
  }
  return problems;
}

export async function memberSets(context: BenchContext, origin: string) {
  const wanted = (Deno.env.get("LATENCY_MEMBERS") ?? "http,cli").split(",");
  const sets: [string, Member[]][] = [];
  if (wanted.includes("http")) sets.push(["HTTP", httpMembers(origin)]);
  if (!wanted.includes("cli")) return sets;
  const { found, missing } = await findClis();
  if (missing.length) context.log(`latency: CLI members skipped, missing: ${missing.join("; ")}`);
  else {
    await prepareHome(cliHome(context.tempDir));
    sets.push(["CLI", cliMembers(found, origin, cliHome(context.tempDir))]);
  }
  return sets;
}

export const latency: Scenario = {
  name: "latency",
  description: "council vs each member alone on a fake vendor with model-like latency " +
    "(HTTP members; real CLIs when installed)",
  async run(context) {
    Deno.env.set(KEY_VARIABLE, "latency");
    // A state directory of the run's own: no lateness learned in earlier runs (or the user's).
    const userState = Deno.env.get("XDG_STATE_HOME");
    Deno.env.set("XDG_STATE_HOME", join(context.tempDir, "latency-state"));
    // Filled in per member set below: HTTP members by name, CLIs by the API they speak.
    const profiles: Record<string, LatencyProfile> = {};
    const vendor = startFakeVendor({
      seed: 29,
      answer: (request) => latencyAnswer(request, synthesis.pick),
      profiles,
    });
    const tables: string[] = [];
    const figures: Figure[] = [];
    const problems: string[] = [];
    // The host's project, a git repository: fanned-out answer turns isolate their children in
    // worktrees of it, as a user's session does (without one, isolation never applies).
    const project = join(context.tempDir, "latency-project");
    await Deno.mkdir(project, { recursive: true });
    await gitRepo(project, { "notes.md": "# Notes\n\nThe build runs with deno tasks.\n" });
    try {
      for (const [set, members] of await memberSets(context, vendor.origin)) {
        Object.assign(profiles, profilesByCaller(members));
        const variants = await startVariants(context, set, members);
        try {
          problems.push(...await measure(context, variants, vendor, project));
        } finally {
          await Promise.all(variants.map((v) => v.stop()));
        }
        for (const flavour of FLAVOURS) {
          const { table, figures: f } = report(set, flavour, variants);
          tables.push(table);
          figures.push(...f);
        }
        // A session's later turns, where the warm pool serves the isolated children.
        const session = set === "CLI"
          ? await measureSessions(context, councilConfig(members), vendor, project)
          : undefined;
        if (session) {
          tables.push(session.table);
          figures.push(...session.figures);
          problems.push(...session.problems);
        }
      }
    } finally {
      await vendor.close();
      Deno.env.delete(KEY_VARIABLE);
      if (userState === undefined) Deno.env.delete("XDG_STATE_HOME");
      else Deno.env.set("XDG_STATE_HOME", userState);
    }
    const sources = Object.entries(PROFILES).map(([name, p]) => `- ${name}: ${p.source}`);
    tables.push(`Latency profiles:\n${sources.join("\n")}`);
    if (problems.length) figures[0].note += `; ${problems.length} failed turns: ${problems[0]}`;
    const calls = vendor.requests.map((r) => ({
      caller: r.caller,
      model: r.model,
      path: r.path,
      ttftMs: r.firstTokenAt - r.arrivedAt,
      ms: r.repliedAt - r.arrivedAt,
    }));
    return { figures, tables, details: { problems, profiles: PROFILES, calls } };
  },
};
