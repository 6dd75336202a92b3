/**
 * The figure of record: council turns with the REAL claude, codex and gemini CLIs as children
 * (installed as the tests install them) against a local stub model that answers at once (or
 * after `REALCHAIN_DELAY_MS`, or fails as `REALCHAIN_FAIL` says, e.g. `codex=500,gemini=hang`).
 * Two kinds of turn: an answer turn (three drafts, then the synthesizer writes the answer) and
 * an action turn (three different tool proposals, then the synthesizer picks one). Per turn: the
 * wall time, each CLI process's spawn → first upstream request, model time and exit tail (from a
 * wrapper's stamps and the stub's records), and the gateway's share (the time no CLI ran). With
 * `--compare DIR`, DIR's gateway runs the same turns interleaved with this one's.
 * `REALCHAIN_RUNS=N` sets the measured turns per kind (default 10), `REALCHAIN_AGENTS=claude,gemini`
 * the council (the first is the synthesizer; e.g. the same turn with a failing agent removed),
 * `REALCHAIN_TIMEOUT_MS` each agent's time-out (default 120 s). Without `REALCHAIN_FAIL` every child
 * is waited for (the quorum's `minAnswers: 0`). A second column runs this code
 * with a warm pool of one child per agent (`REALCHAIN_WARM_POOL=0`: without it), pausing
 * `REALCHAIN_SETTLE_MS` (default 4 s) after each of its turns while its pool refills.
 */
import { join } from "node:path";
import { messagesBody, streamMessages } from "../client.ts";
import { startGateway } from "../processes.ts";
import { type Figure, summarize } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";
import { chainAgent, findClis, type InstalledCli, prepareHome } from "../realchain/clis.ts";
import { type Column, sharePercent, turnTable } from "../realchain/report.ts";
import {
  type Behaviour,
  type ChainStub,
  epochNow,
  proposedFile,
  startChainStub,
  type Vendor,
} from "../realchain/upstream.ts";
import { parseStamps, type TurnTimeline, turnTimeline } from "../realchain/timeline.ts";

export type TurnKind = "answer" | "action";
const KINDS: readonly TurnKind[] = ["answer", "action"];
/** Each agent's time-out unless `REALCHAIN_TIMEOUT_MS` says otherwise. */
const AGENT_TIMEOUT_MS = 120_000;

/** One gateway under test. */
interface Variant {
  label: string;
  repoRoot: string;
  /** Config over the bench's (e.g. the warm pool). */
  config?: Record<string, unknown>;
  /** A pause after each of its turns, for its warm pool's refills to start up undisturbed. */
  settleMs?: number;
  stampsPath: string;
  origin?: string;
  stop?: () => Promise<void>;
}

/** The stub's behaviour per vendor from `REALCHAIN_DELAY_MS` and `REALCHAIN_FAIL`. */
export function behavioursFrom(
  env: (name: string) => string | undefined,
): Partial<Record<Vendor, Behaviour>> {
  const delayMs = Number(env("REALCHAIN_DELAY_MS") ?? 0) || 0;
  const out: Partial<Record<Vendor, Behaviour>> = {};
  for (const vendor of ["claude", "codex", "gemini"] as const) out[vendor] = { delayMs };
  for (const entry of (env("REALCHAIN_FAIL") ?? "").split(",").filter(Boolean)) {
    const [vendor, how] = entry.split("=").map((s) => s.trim());
    if (!(vendor in out) || !how) throw new Error(`REALCHAIN_FAIL: cannot read "${entry}"`);
    const fail = how === "hang" ? "hang" : Number(how);
    if (fail !== "hang" && !(fail >= 400 && fail < 600)) {
      throw new Error(`REALCHAIN_FAIL: "${how}" is not an HTTP error status or "hang"`);
    }
    out[vendor as Vendor] = { delayMs, fail };
  }
  return out;
}

/** The host's request: a plain question, or one with a Read tool to propose. */
export function chainTurnBody(
  kind: TurnKind,
  run: number,
  project?: string,
): Record<string, unknown> {
  const ask = `Real-chain ${kind} turn ${run}: which notes file should we look at first?`;
  const body = messagesBody(ask);
  // A host names its project in the system prompt: children then work in it (isolated copies
  // of it on a fanned-out answer turn), as in a real session.
  if (project) body.system = `${body.system}\n<env>\nPrimary working directory: ${project}\n</env>`;
  if (kind === "answer") return body;
  return {
    ...body,
    tools: [{
      name: "Read",
      description: "Reads a file from the local filesystem.",
      input_schema: {
        type: "object",
        properties: { file_path: { type: "string" } },
        required: ["file_path"],
      },
    }],
  };
}

interface TurnOutcome {
  startedAt: number;
  endedAt: number;
  problem?: string;
}

/** Sends one turn and checks the answer is the synthesizer's (or one child's proposal). */
async function sendTurn(origin: string, kind: TurnKind, run: number): Promise<TurnOutcome> {
  let toolInput = "";
  let toolName = "";
  const startedAt = epochNow();
  const turn = await streamMessages(origin, chainTurnBody(kind, run), {
    onEvent(event) {
      if (event.event === "content_block_start") {
        const block = event.data?.content_block;
        if (block?.type === "tool_use") toolName = block.name;
      } else if (event.event === "content_block_delta") {
        const delta = event.data?.delta;
        if (delta?.type === "input_json_delta") toolInput += delta.partial_json;
      }
    },
  });
  const endedAt = epochNow();
  let problem = turn.error;
  if (!problem && kind === "answer" && !turn.answer.includes("Final answer from the synth")) {
    problem = `not the synthesizer's answer: ${JSON.stringify(turn.answer.slice(-160))}`;
  }
  const proposals = ["claude", "codex", "gemini"].map((v) => proposedFile(v as Vendor));
  if (!problem && kind === "action" && !proposals.some((f) => toolInput.includes(f))) {
    problem = `no proposed Read came back (tool ${toolName || "none"}, input ${toolInput}; ` +
      `text ${JSON.stringify(turn.answer.slice(-160))})`;
  }
  return { startedAt, endedAt, problem };
}

/** Waits (up to 10 s) until every process started in the turn has stamped its exit. */
async function settledTimeline(
  variant: Variant,
  outcome: TurnOutcome,
  stub: ChainStub,
): Promise<TurnTimeline> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = await Deno.readTextFile(variant.stampsPath).catch(() => "");
    const stamps = parseStamps(text);
    const timeline = turnTimeline(outcome.startedAt, outcome.endedAt, stamps, stub.records);
    const exited = timeline.processes.every((p) => p.exitStatus !== undefined);
    if (exited || Date.now() > deadline) return timeline;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A CLI's exit after its answer: its own 0, or 143 when the gateway ended it then (SIGTERM). */
const ANSWERED_EXITS = new Set([0, 143]);

/** Why a turn's processes show the chain was not driven end to end, or undefined. */
export function chainProblem(
  timeline: TurnTimeline,
  vendors: readonly Vendor[],
): string | undefined {
  for (const vendor of vendors) {
    const child = timeline.processes.find((p) => p.label === vendor);
    if (!child) return `${vendor}: no child process was started`;
    if (child.requests === 0) return `${vendor}: its CLI never reached the stub upstream`;
    if (!ANSWERED_EXITS.has(child.exitStatus!)) {
      return `${vendor}: its CLI exited with status ${child.exitStatus}`;
    }
  }
  const synth = timeline.processes.find((p) => p.label === "synth");
  if (!synth) return "no synthesizer ran";
  if (synth.requests === 0) return "the synthesizer's CLI never reached the stub upstream";
  return undefined;
}

/** The wrapper's own cost: its wall around /bin/true minus /bin/true's, median of 20. */
async function wrapperCostMs(wrapper: string, stampsPath: string): Promise<number> {
  const time = async (command: string, env: Record<string, string>) => {
    const t0 = performance.now();
    await new Deno.Command(command, { env, stdout: "null", stderr: "null" }).output();
    return performance.now() - t0;
  };
  const wrapped: number[] = [];
  const bare: number[] = [];
  const env = {
    REALCHAIN_EXEC: "true",
    REALCHAIN_TAG: "calibration",
    REALCHAIN_STAMPS: stampsPath,
  };
  for (let i = 0; i < 20; i++) {
    wrapped.push(await time(wrapper, env));
    bare.push(await time("true", {}));
  }
  return summarize(wrapped).p50 - summarize(bare).p50;
}

async function startVariants(
  context: BenchContext,
  clis: InstalledCli[],
  stub: ChainStub,
  home: string,
): Promise<Variant[]> {
  const pool = Deno.env.get("REALCHAIN_WARM_POOL") !== "0";
  const roots: Omit<Variant, "stampsPath">[] = [
    // The warm pool is on by default: the first column is this code without it.
    { label: "this code", repoRoot: context.repoRoot, config: { warmPool: "off" } },
    ...(pool
      ? [{
        label: "this code, warmPool",
        repoRoot: context.repoRoot,
        config: { warmPool: "on" },
        settleMs: Number(Deno.env.get("REALCHAIN_SETTLE_MS") ?? 4000),
      }]
      : []),
    ...(context.compareRoot ? [{ label: "compared", repoRoot: context.compareRoot }] : []),
  ];
  const variants: Variant[] = [];
  for (const [i, root] of roots.entries()) {
    const stampsPath = join(context.tempDir, `realchain-stamps-${i}.txt`);
    const options = {
      stubOrigin: stub.origin,
      home,
      wrapper: join(context.repoRoot, "scripts/bench/realchain/stamp.sh"),
      stampsPath,
      timeoutMs: Number(Deno.env.get("REALCHAIN_TIMEOUT_MS")) || AGENT_TIMEOUT_MS,
    };
    const gateway = await startGateway({ ...context, repoRoot: root.repoRoot }, {
      fanOutPolicy: "always",
      councilSize: clis.length,
      defaultAgents: clis.map((cli) => chainAgent(cli, options)),
      // The chain of every CLI is what is timed: with no vendor failing, every child is waited
      // for (a CLI slow to start on a busy machine is not cut at the quorum's grace); with one,
      // the user's quorum decides, as in an outage.
      ...(Deno.env.get("REALCHAIN_FAIL") ? {} : { quorum: { minAnswers: 0 } }),
      ...root.config,
    }, { olderGateway: root.label === "compared" });
    const label = root.label === "compared" ? `compared (${root.repoRoot})` : root.label;
    variants.push({ ...root, label, stampsPath, origin: gateway.origin, stop: gateway.stop });
  }
  return variants;
}

interface Measured {
  columns: Record<TurnKind, Column[]>;
  problems: string[];
}

async function measure(
  context: BenchContext,
  variants: Variant[],
  stub: ChainStub,
  vendors: Vendor[],
): Promise<Measured> {
  const columns = Object.fromEntries(
    KINDS.map((kind) => [kind, variants.map((v) => ({ label: v.label, timelines: [] }))]),
  ) as unknown as Record<TurnKind, Column[]>;
  const problems: string[] = [];
  const warmUp = runs(context, 1, 0);
  const count = runs(context, Number(Deno.env.get("REALCHAIN_RUNS")) || 10, 1);
  // A warm pool keeps a key warm from its first run on, and a key includes the children's
  // access (an action turn's read-only children are not an answer turn's): without warm-up
  // turns (quick), unmeasured action turns first, so that the measured action turn is warm.
  for (const variant of variants) {
    if (warmUp > 0 || !variant.settleMs) continue;
    for (let i = 0; i < 2; i++) {
      await sendTurn(variant.origin!, "action", -1);
      await new Promise((resolve) => setTimeout(resolve, variant.settleMs));
    }
  }
  for (let run = -warmUp; run < count; run++) {
    for (const kind of KINDS) {
      for (const [i, variant] of variants.entries()) {
        const outcome = await sendTurn(variant.origin!, kind, run);
        const timeline = await settledTimeline(variant, outcome, stub);
        if (variant.settleMs) await new Promise((resolve) => setTimeout(resolve, variant.settleMs));
        const problem = outcome.problem ?? chainProblem(timeline, vendors);
        if (problem) problems.push(`${variant.label}, ${kind} turn: ${problem}`);
        else if (run >= 0) columns[kind][i].timelines.push(timeline);
        context.log(
          `realchain ${variant.label} ${kind} ${run < 0 ? "warm-up" : `${run + 1}/${count}`}: ` +
            `${timeline.wallMs.toFixed(0)} ms, gateway ${timeline.gatewayMs.toFixed(1)} ms` +
            (problem ? `; ${problem}` : ""),
        );
      }
    }
  }
  return { columns, problems };
}

function figuresOf(measured: Measured, wrapperMs: number, baseNote: string): Figure[] {
  const figures: Figure[] = [];
  const failed = measured.problems;
  const note = baseNote +
    (failed.length ? `; ${failed.length} failed turns, first: ${failed[0]}` : "");
  for (const kind of KINDS) {
    const columns = measured.columns[kind];
    const ours = columns[0];
    const compared = columns.find((c) => c.label.startsWith("compared"));
    const walls = (c: Column) => summarize(c.timelines.map((t) => t.wallMs));
    const ratio = (c: Column) =>
      compared
        ? `; ${(walls(c).p50 / walls(compared).p50).toFixed(2)} × the compared gateway's (p50)`
        : "";
    for (const column of columns.filter((c) => c !== compared)) {
      const pooled = column !== ours;
      figures.push({
        scenario: "realchain",
        name: `Real chain: ${kind} turn wall (3 CLI children + synthesizer` +
          `${pooled ? ", warm pool" : ""})`,
        unit: "ms",
        gateway: walls(column),
        ...(compared ? { baseline: { label: compared.label, value: walls(compared) } } : {}),
        note: `${note}${ratio(column)}`,
      });
    }
  }
  const all = KINDS.flatMap((kind) => measured.columns[kind][0].timelines);
  const share = summarize(all.map(sharePercent));
  figures.push({
    scenario: "realchain",
    name: "Real chain: the gateway's share of a turn (no CLI process alive)",
    unit: "%",
    gateway: share,
    target: { text: "≤ 2 % (p50)", pass: Number.isFinite(share.p50) && share.p50 <= 2 },
    note: `${summarize(all.map((t) => t.gatewayMs)).p50.toFixed(1)} ms p50, which includes ` +
      `two starts of the stamping wrapper (${wrapperMs.toFixed(1)} ms each, measured)`,
  });
  return figures;
}

export const realchain: Scenario = {
  name: "realchain",
  description: "the real claude, codex and gemini CLIs against a local stub model (figure of " +
    "record)",
  async run(context) {
    const { found: installed, missing } = await findClis();
    // `REALCHAIN_AGENTS=claude,gemini`: a smaller council (the first named is the synthesizer).
    const chosen = Deno.env.get("REALCHAIN_AGENTS")?.split(",").map((v) => v.trim());
    const found = chosen
      ? chosen.map((v) => installed.find((c) => c.vendor === v)).filter((c) => c !== undefined)
      : installed;
    if (missing.length) throw new Error(`CLIs missing (see .ci/run): ${missing.join("; ")}`);
    const behaviours = behavioursFrom((name) => Deno.env.get(name));
    const stub = startChainStub(behaviours);
    const home = join(context.tempDir, "realchain-home");
    await prepareHome(home);
    const variants: Variant[] = [];
    try {
      variants.push(...await startVariants(context, found, stub, home));
      // A vendor the stub fails on command is expected to fail; the others must get through.
      const vendors = found.map((c) => c.vendor).filter((v) => !behaviours[v]?.fail);
      const measured = await measure(context, variants, stub, vendors);
      const wrapperMs = await wrapperCostMs(
        join(context.repoRoot, "scripts/bench/realchain/stamp.sh"),
        join(context.tempDir, "realchain-calibration.txt"),
      );
      const delay = behaviours.claude?.delayMs ?? 0;
      const note = `${found.map((c) => `${c.vendor} ${c.version}`).join(", ")}; stub ` +
        (delay ? `answers after ${delay} ms` : "answers at once") +
        (Deno.env.get("REALCHAIN_FAIL") ? `; failing: ${Deno.env.get("REALCHAIN_FAIL")}` : "");
      // Quick mode is CI's check that every CLI can still be driven: any problem fails it.
      const wentThrough = KINDS.every((k) => measured.columns[k][0].timelines.length > 0);
      if (measured.problems.length && (context.quick || !wentThrough)) {
        throw new Error(`the chain was not driven end to end: ${measured.problems.join("; ")}`);
      }
      return {
        figures: figuresOf(measured, wrapperMs, note),
        tables: KINDS.map((kind) => {
          const columns = measured.columns[kind];
          const base = Math.max(0, columns.findIndex((c) => c.label.startsWith("compared")));
          return `Real chain, ${kind} turn (${note}):\n${turnTable(columns, base)}`;
        }),
        details: {
          clis: found,
          behaviours,
          wrapperMs,
          problems: measured.problems,
          // Requests the stub could not tie to a process (no x-realchain-pid), by vendor.
          unattributed: stub.records.filter((r) => r.pid === undefined).map((r) => r.vendor),
          timelines: measured.columns,
        },
      };
    } finally {
      await Promise.all(variants.map((v) => v.stop?.()));
      await stub.close();
    }
  },
};
