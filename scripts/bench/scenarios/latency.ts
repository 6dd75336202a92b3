/**
 * The latency bench: council turns against the fake vendor API answering at model-like speed
 * (latency/profiles.ts), with the gateway's defaults (isolation and warm pool as shipped). For
 * HTTP members, and the real CLIs when installed (`LATENCY_MEMBERS=http`, `cli`, or both by
 * default), per turn kind (answer, action), interleaved in one run: each member's solo wall and
 * first answer, the council's, council / slowest solo, and the floor (the slowest child the
 * quorum waited for, plus the synthesizer's time to its first token). `LATENCY_RUNS=N` per kind.
 */
import { chainTurnBody, type TurnKind } from "./realchain.ts";
import { streamMessages } from "../client.ts";
import { startGateway } from "../processes.ts";
import { type Figure, formatNumber, formatTable, quantile } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";
import { findClis, prepareHome } from "../realchain/clis.ts";
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

const KINDS: readonly TurnKind[] = ["answer", "action"];
const SYNTH_MARKS = ["Candidate replies", "Proposed next steps"];

/** The fake's script: drafts, tool proposals, a pick among proposals, the written answer. */
export function latencyAnswer(request: RecordedRequest): Answer | undefined {
  const prompt = request.prompt;
  if (prompt.includes("Proposed next steps")) return { json: { choose: 1 } };
  if (prompt.includes("Candidate replies")) return undefined;
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

const synthOf = (calls: readonly RecordedRequest[]) =>
  calls.find((r) => SYNTH_MARKS.some((m) => r.prompt.includes(m)));

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

async function sendTurn(origin: string, kind: TurnKind, run: number, vendor: FakeVendor) {
  const before = vendor.requests.length;
  const startedAt = performance.now();
  let first = NaN;
  const mark = () => (first = Number.isNaN(first) ? performance.now() - startedAt : first);
  const turn = await streamMessages(origin, chainTurnBody(kind, run), {
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
  samples: Record<TurnKind, Sample[]>;
}

async function startVariants(context: BenchContext, set: string, members: Member[]) {
  const variants: Variant[] = [];
  const start = async (label: string, config: Record<string, unknown>) => {
    const gateway = await startGateway(context, config);
    variants.push({ label, ...gateway, samples: { answer: [], action: [] } });
  };
  for (const member of members) {
    await start(`${set} ${member.name} alone`, {
      fanOutPolicy: "never",
      defaultAgents: [member.entry],
    });
  }
  await start(`${set} council`, {
    fanOutPolicy: "always",
    councilSize: members.length,
    defaultAgents: members.map((m) => m.entry),
  });
  return variants;
}

const p50 = (samples: Sample[], pick: (s: Sample) => number) =>
  quantile(samples.map(pick).filter(Number.isFinite), 0.5);
const seconds = (ms: number) => (Number.isFinite(ms) ? `${formatNumber(ms / 1000)} s` : "–");
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ×` : "–");

/** The set's figures and table for one kind: solos, council, ratios, floor. */
export function report(set: string, kind: TurnKind, variants: Variant[]) {
  const council = variants.at(-1)!;
  const solos = variants.slice(0, -1);
  const slowest = Math.max(...solos.map((v) => p50(v.samples[kind], (s) => s.wallMs)));
  const slowestFirst = Math.max(...solos.map((v) => p50(v.samples[kind], (s) => s.firstMs)));
  const wall = p50(council.samples[kind], (s) => s.wallMs);
  const first = p50(council.samples[kind], (s) => s.firstMs);
  const floor = p50(council.samples[kind], (s) => s.floorMs);
  const bound = slowest + p50(council.samples[kind], (s) => s.synthTtftMs);
  const rows = variants.map((v) => [
    v.label,
    seconds(p50(v.samples[kind], (s) => s.wallMs)),
    seconds(p50(v.samples[kind], (s) => s.firstMs)),
  ]);
  rows.push(
    ["council / slowest solo", times(wall / slowest), times(first / slowestFirst)],
    ["floor (slowest awaited child + synth TTFT)", seconds(floor), ""],
    ["council / floor", times(wall / floor), ""],
  );
  const table = `Latency, ${set} members, ${kind} turn (p50 of ${
    council.samples[kind].length
  } runs):\n${formatTable(["", "wall", "first answer"], rows)}`;
  const figure = (name: string, value: number, extra: Partial<Figure> = {}): Figure => ({
    scenario: "latency",
    name: `Latency (${set}), ${kind} turn: ${name}`,
    unit: "×",
    gateway: value,
    ...extra,
  });
  const figures = [
    figure("council wall / slowest member alone", wall / slowest, {
      ...(kind === "answer" ? { reference: "≤ 1.25 × once the synthesizer may pick" } : {}),
      note: `council ${seconds(wall)}, slowest alone ${seconds(slowest)}, floor ${seconds(floor)}`,
    }),
    ...(kind === "action"
      ? [figure("council wall / (slowest alone + synthesizer's first token)", wall / bound, {
        target: { text: "≤ 1.1 ×", pass: wall / bound <= 1.1 },
      })]
      : []),
    figure("council wall / floor", wall / floor),
    figure("council first answer / slowest member's", first / slowestFirst, {
      note: `council ${seconds(first)}, slowest alone ${seconds(slowestFirst)}`,
    }),
  ];
  return { table, figures };
}

async function measure(context: BenchContext, variants: Variant[], vendor: FakeVendor) {
  const count = runs(context, Number(Deno.env.get("LATENCY_RUNS")) || 5, 1);
  const problems: string[] = [];
  for (let run = 0; run < count; run++) {
    for (const kind of KINDS) {
      for (const variant of variants) {
        const { sample, error } = await sendTurn(variant.origin, kind, run, vendor);
        if (error) problems.push(`${variant.label}, ${kind}: ${error}`);
        else variant.samples[kind].push(sample);
        context.log(
          `latency ${variant.label} ${kind} ${run + 1}/${count}: wall ${seconds(sample.wallMs)}, ` +
            `first ${seconds(sample.firstMs)}${error ? `; ${error}` : ""}`,
        );
      }
    }
  }
  return problems;
}

async function memberSets(context: BenchContext, origin: string) {
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
    // Filled in per member set below: HTTP members by name, CLIs by the API they speak.
    const profiles: Record<string, LatencyProfile> = {};
    const vendor = startFakeVendor({ seed: 29, answer: latencyAnswer, profiles });
    const tables: string[] = [];
    const figures: Figure[] = [];
    const problems: string[] = [];
    try {
      for (const [set, members] of await memberSets(context, vendor.origin)) {
        Object.assign(profiles, profilesByCaller(members));
        const variants = await startVariants(context, set, members);
        try {
          problems.push(...await measure(context, variants, vendor));
        } finally {
          await Promise.all(variants.map((v) => v.stop()));
        }
        for (const kind of KINDS) {
          const { table, figures: f } = report(set, kind, variants);
          tables.push(table);
          figures.push(...f);
        }
      }
    } finally {
      await vendor.close();
      Deno.env.delete(KEY_VARIABLE);
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
