/**
 * Load driver (issue 9 §4): the real gateway (a subprocess) with a council of three `sh` fakes
 * of known latency. First N concurrent streaming turns over both protocols (0 errors, no
 * cross-talk: every answer must name only its own turn's marker), then M sequential turns with
 * the gateway's idle RSS and open file descriptors read at checkpoints (RSS must stop growing,
 * no fd may leak), and finally the process table checked for leftover children.
 *
 *   deno run -A scripts/load.ts [--concurrency 50] [--turns 1000] [--child-ms 100] … (--help)
 *
 * Needs -A: it reads /proc/<gateway pid>/{status,fd}. Exits 1 when a check fails.
 */
import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SseDecoder } from "../tests/support/sse_reader.ts";
import { startGateway } from "./bench/processes.ts";
import { quantile } from "./bench/results.ts";
import type { BenchContext } from "./bench/scenario.ts";

export const MARKER_PREFIX = "LOAD-MARK-";
export const FAKE_PATH = fileURLToPath(new URL("./load/echo-marker.sh", import.meta.url));
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SYSTEM = "You are a terse assistant for load testing.";

export type Protocol = "messages" | "responses";

/** Three `command` agents running the marker fake (at `fake`); entry 0 also synthesizes. */
export function loadConfig(
  childMs: number,
  synthMs: number,
  fake = FAKE_PATH,
): Record<string, unknown> {
  const env = {
    LOAD_CHILD_SLEEP: String(childMs / 1000),
    LOAD_SYNTH_SLEEP: String(synthMs / 1000),
  };
  return {
    fanOutPolicy: "always",
    councilSize: 3,
    maxTurns: 1_000_000,
    // The load is the point: no global limit may queue or refuse its concurrent turns.
    maxConcurrentTurns: 1000,
    defaultAgents: ["a", "b", "c"].map((name) => ({
      name,
      runner: "command",
      model: "load",
      command: fake,
      env,
    })),
  };
}

/** A marker unique to one turn of one run: `LOAD-MARK-` + lower-case letters and digits. */
export function newMarker(run: string, index: number): string {
  return `${MARKER_PREFIX}${run}t${index.toString(36)}`;
}

/** A streaming request opening its own session (the marker is in the first user message). */
export function turnBody(protocol: Protocol, marker: string): Record<string, unknown> {
  const ask = `Turn ${marker}: which turn is this?`;
  return protocol === "messages"
    ? {
      model: "svc-council",
      max_tokens: 1024,
      stream: true,
      system: SYSTEM,
      messages: [{ role: "user", content: ask }],
    }
    : { model: "svc-council", stream: true, instructions: SYSTEM, input: ask };
}

export interface LoadTurn {
  protocol: Protocol;
  marker: string;
  status: number;
  answer: string;
  wallMs: number;
  /** Why the turn failed (HTTP status, error event, no terminal event, network). */
  error?: string;
}

const TERMINAL: Record<Protocol, string> = {
  messages: "message_stop",
  responses: "response.completed",
};

/** The answer's text from one SSE frame of either protocol ("" when it carries none). */
function answerText(protocol: Protocol, event: string, data: string): string {
  if (protocol === "messages" && event === "content_block_delta") {
    const delta = JSON.parse(data).delta;
    return delta?.type === "text_delta" ? delta.text : "";
  }
  if (protocol === "responses" && event === "response.output_text.delta") {
    return JSON.parse(data).delta ?? "";
  }
  return "";
}

/** One streaming turn read to its end. Never throws. */
export async function loadTurn(
  origin: string,
  protocol: Protocol,
  marker: string,
  client?: Deno.HttpClient,
): Promise<LoadTurn> {
  const started = performance.now();
  const turn: LoadTurn = { protocol, marker, status: 0, answer: "", wallMs: 0 };
  let finished = false;
  try {
    const response = await fetch(`${origin}/v1/${protocol}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(turnBody(protocol, marker)),
      client,
    });
    turn.status = response.status;
    const parser = new SseDecoder();
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) {
      for (const frame of parser.push(decoder.decode(chunk, { stream: true }))) {
        if (frame.event === TERMINAL[protocol]) finished = true;
        else if (frame.event === "error" || frame.event === "response.failed") {
          turn.error = `${frame.event}: ${frame.text.slice(0, 200)}`;
        } else turn.answer += answerText(protocol, frame.event ?? "message", frame.text);
      }
    }
    if (turn.status !== 200) turn.error ??= `HTTP ${turn.status}`;
    else if (!finished) turn.error ??= `no ${TERMINAL[protocol]}`;
  } catch (err) {
    turn.error = `request failed: ${(err as Error).message}`;
  }
  turn.wallMs = performance.now() - started;
  return turn;
}

/** Every load marker in a text, in order. */
export function markersIn(text: string): string[] {
  return text.match(/LOAD-MARK-[0-9a-z]*/g) ?? [];
}

/**
 * Why an answer shows cross-talk (or is not the synthesizer's), or undefined when it names
 * only its own marker: once from the conversation and once per candidate it synthesized.
 */
export function crossTalk(turn: LoadTurn): string | undefined {
  const markers = markersIn(turn.answer);
  const foreign = markers.filter((m) => m !== turn.marker);
  if (foreign.length) return `${turn.marker} heard of ${[...new Set(foreign)].join(", ")}`;
  if (!turn.answer.startsWith("answer:") || markers.length < 3) {
    return `${turn.marker}: not a synthesis of its candidates: ${JSON.stringify(turn.answer)}`;
  }
  return undefined;
}

/**
 * `count` turns at once, alternating Messages and Responses, on connections of their own
 * (closed afterwards, so the gateway's socket count returns to where it was).
 */
export async function concurrentTurns(
  origin: string,
  run: string,
  count: number,
): Promise<LoadTurn[]> {
  const client = Deno.createHttpClient({});
  try {
    return await Promise.all(Array.from({ length: count }, (_, i) => {
      const protocol = i % 2 === 0 ? "messages" : "responses";
      return loadTurn(origin, protocol, newMarker(run, i), client);
    }));
  } finally {
    client.close();
  }
}

/** Open file descriptors of a process (Linux: entries of /proc/<pid>/fd). */
export function fdCount(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}

/** Processes still running the marker fake at `fake` (the gateway should have ended them). */
export async function leftoverFakes(fake = FAKE_PATH): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="] }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(fake) && !/^\s*\d+\s+Z/.test(line));
}

// ---- the run ----------------------------------------------------------------------------

const HELP = `Usage: deno run -A scripts/load.ts [options]

Starts the gateway (a subprocess, the start task's flags) with a council of three sh fakes of
known latency, then:
  1. --concurrency streaming turns at once, alternating /v1/messages and /v1/responses:
     every one must succeed and its answer name only its own turn's marker (no cross-talk);
  2. --turns sequential turns (alternating protocols), then --confirm more: RSS is read after
     every tenth turn, and idle (with the open fd count) every tenth of the soak. After the
     soak RSS must have stopped growing: the confirmation turns' peak may exceed the peak of
     the soak's second half by --max-growth-mb at most. The fd count must end where it was
     after the warm-up;
  3. no fake child may be left running.
Exits 0 when every check passes, 1 otherwise.

Options:
  --concurrency N     concurrent turns (default 50)
  --turns N           sequential turns for the soak (default 1000; 0 skips it)
  --confirm N         further turns checking RSS has stopped growing (default 500)
  --child-ms MS       each child's latency (default 100)
  --synth-ms MS       the synthesizer's latency (default 50)
  --max-growth-mb MB  allowed RSS peak growth after the soak (default 5)
  --json              print the figures as JSON
  --keep-logs         keep the scratch directory (gateway config and log)
  -h, --help          show this help
`;

interface Options {
  concurrency: number;
  turns: number;
  confirm: number;
  childMs: number;
  synthMs: number;
  maxGrowthMb: number;
  json: boolean;
  keepLogs: boolean;
}

function parseOptions(argv: string[]): Options | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      concurrency: { type: "string", default: "50" },
      turns: { type: "string", default: "1000" },
      confirm: { type: "string", default: "500" },
      "child-ms": { type: "string", default: "100" },
      "synth-ms": { type: "string", default: "50" },
      "max-growth-mb": { type: "string", default: "5" },
      json: { type: "boolean", default: false },
      "keep-logs": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  const number = (name: string, raw: string) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: ${raw} is not a number ≥ 0`);
    return n;
  };
  return {
    concurrency: number("concurrency", values.concurrency),
    turns: number("turns", values.turns),
    confirm: number("confirm", values.confirm),
    childMs: number("child-ms", values["child-ms"]),
    synthMs: number("synth-ms", values["synth-ms"]),
    maxGrowthMb: number("max-growth-mb", values["max-growth-mb"]),
    json: values.json,
    keepLogs: values["keep-logs"],
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Median of a few RSS readings once the gateway has been idle a moment (MB). */
async function idleRss(read: () => Promise<number>): Promise<number> {
  await sleep(1000);
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(await read());
    await sleep(100);
  }
  return quantile(readings, 0.5);
}

interface Sample {
  turns: number;
  rssMb: number;
}

interface Checkpoint extends Sample {
  fds: number;
}

export interface LoadReport {
  concurrency: {
    turns: number;
    wallMs: number;
    errors: number;
    crossTalk: number;
    p50Ms: number;
    p99Ms: number;
    firstProblems: string[];
  };
  soak: {
    turns: number;
    wallMs: number;
    errors: number;
    crossTalk: number;
    /** Turns after the soak that check its RSS has stopped growing. */
    confirmTurns: number;
    checkpoints: Checkpoint[];
    /** RSS after every tenth turn. */
    samples: Sample[];
    /** Peak RSS over the soak's second half, and over the confirmation turns (MB). */
    soakPeakMb: number;
    confirmPeakMb: number;
    growthAfterSoakMb: number;
    fdLeak: number;
    firstProblems: string[];
  };
  rssStartMb: number;
  fdsStart: number;
  leftoverChildren: number;
  failures: string[];
}

function problems(turns: LoadTurn[]): { errors: number; crossTalk: number; first: string[] } {
  const errors = turns.filter((t) => t.error);
  const talk = turns.filter((t) => !t.error).map(crossTalk).filter((x) => x !== undefined);
  const first = [...errors.map((t) => `${t.marker}: ${t.error}`), ...talk].slice(0, 5);
  return { errors: errors.length, crossTalk: talk.length, first };
}

async function run(options: Options, log: (line: string) => void): Promise<LoadReport> {
  const tempDir = await Deno.makeTempDir({ prefix: "council-load-" });
  const context: BenchContext = {
    quick: false,
    repoRoot: REPO_ROOT,
    tempDir,
    gatewayFlags: [],
    log,
  };
  const runId = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  const gateway = await startGateway(context, loadConfig(options.childMs, options.synthMs));
  log(`gateway pid ${gateway.pid} at ${gateway.origin}, log ${gateway.logPath}`);
  const failures: string[] = [];
  try {
    let index = 0;
    /** `count` turns one after the other, on one connection closed afterwards. */
    const sequential = async (
      count: number,
      afterEach: () => Promise<void> = () => Promise.resolve(),
    ): Promise<LoadTurn[]> => {
      const client = Deno.createHttpClient({});
      const done: LoadTurn[] = [];
      try {
        for (let i = 0; i < count; i++, index++) {
          const protocol = index % 2 === 0 ? "messages" : "responses";
          const marker = newMarker(runId, 100_000 + index);
          done.push(await loadTurn(gateway.origin, protocol, marker, client));
          await afterEach();
        }
      } finally {
        client.close();
      }
      return done;
    };
    const warm = problems(await sequential(10));
    if (warm.errors + warm.crossTalk) failures.push(`warm-up: ${warm.first.join("; ")}`);
    const rssStartMb = await idleRss(gateway.rssMb);
    const fdsStart = fdCount(gateway.pid);
    log(`warm: RSS ${rssStartMb.toFixed(1)} MB, ${fdsStart} fds`);

    const started = performance.now();
    const burst = await concurrentTurns(gateway.origin, runId, options.concurrency);
    const burstWall = performance.now() - started;
    const burstProblems = problems(burst);
    const walls = burst.map((t) => t.wallMs);
    const concurrency = {
      turns: burst.length,
      wallMs: burstWall,
      errors: burstProblems.errors,
      crossTalk: burstProblems.crossTalk,
      p50Ms: quantile(walls, 0.5),
      p99Ms: quantile(walls, 0.99),
      firstProblems: burstProblems.first,
    };
    log(
      `${options.concurrency} concurrent: ${(burstWall / 1000).toFixed(2)} s, ` +
        `${concurrency.errors} errors, ${concurrency.crossTalk} cross-talk`,
    );
    if (concurrency.errors || concurrency.crossTalk) {
      failures.push(`concurrent turns: ${burstProblems.first.join("; ")}`);
    }

    const checkpoints: Checkpoint[] = [];
    const checkpoint = async (turns: number) => {
      const point = { turns, rssMb: await idleRss(gateway.rssMb), fds: fdCount(gateway.pid) };
      checkpoints.push(point);
      log(`soak ${turns}: RSS ${point.rssMb.toFixed(1)} MB, ${point.fds} fds`);
    };
    const soakStarted = performance.now();
    const soakTurns: LoadTurn[] = [];
    // RSS read (not idle) after every tenth turn: GC makes it a sawtooth, so windows are
    // compared by their peaks.
    const samples: Sample[] = [];
    let soakDone = 0;
    const sample = async () => {
      if (++soakDone % 10 === 0) samples.push({ turns: soakDone, rssMb: await gateway.rssMb() });
    };
    await checkpoint(0);
    const total = options.turns + options.confirm;
    const step = Math.max(1, Math.ceil((options.turns || total) / 10));
    for (let doneCount = 0; doneCount < total;) {
      const until = doneCount < options.turns ? options.turns : total;
      const count = Math.min(step, until - doneCount);
      soakTurns.push(...await sequential(count, sample));
      doneCount += count;
      await checkpoint(doneCount);
    }
    const soakProblems = problems(soakTurns);
    const peak = (from: number, to: number) => {
      const window = samples.filter((x) => x.turns > from && x.turns <= to).map((x) => x.rssMb);
      return window.length ? Math.max(...window) : NaN;
    };
    const soakPeakMb = peak(options.turns / 2, options.turns);
    const confirmPeakMb = options.confirm > 0 ? peak(options.turns, total) : soakPeakMb;
    const last = checkpoints.at(-1)!;
    const soak = {
      turns: options.turns,
      confirmTurns: options.confirm,
      wallMs: performance.now() - soakStarted,
      errors: soakProblems.errors,
      crossTalk: soakProblems.crossTalk,
      checkpoints,
      samples,
      soakPeakMb,
      confirmPeakMb,
      growthAfterSoakMb: confirmPeakMb - soakPeakMb,
      fdLeak: last.fds - fdsStart,
      firstProblems: soakProblems.first,
    };
    if (soak.errors || soak.crossTalk) failures.push(`soak: ${soakProblems.first.join("; ")}`);
    if (options.turns > 0 && options.confirm > 0 && soak.growthAfterSoakMb > options.maxGrowthMb) {
      failures.push(
        `RSS still growing after ${options.turns} turns: peak ${soakPeakMb.toFixed(1)} → ` +
          `${confirmPeakMb.toFixed(1)} MB over the next ${options.confirm}`,
      );
    }
    if (soak.fdLeak > 0) failures.push(`${soak.fdLeak} file descriptors leaked`);

    const leftovers = await leftoverFakes();
    if (leftovers.length) failures.push(`children left running: ${leftovers.slice(0, 3)}`);
    return {
      concurrency,
      soak,
      rssStartMb,
      fdsStart,
      leftoverChildren: leftovers.length,
      failures,
    };
  } finally {
    await gateway.stop();
    if (options.keepLogs) log(`kept ${tempDir}`);
    else await Deno.remove(tempDir, { recursive: true }).catch(() => {});
  }
}

/** The report as the lines of the closing note. */
export function formatReport(report: LoadReport, options: Options): string {
  const c = report.concurrency;
  const s = report.soak;
  const first = s.checkpoints[0];
  const atSoak = s.checkpoints.find((p) => p.turns === s.turns);
  const last = s.checkpoints.at(-1);
  const mb = (n: number | undefined) => (n === undefined ? "?" : n.toFixed(1));
  const all = s.turns + s.confirmTurns;
  return [
    `children ${options.childMs} ms, synthesizer ${options.synthMs} ms (3 children + synthesis)`,
    `${c.turns} concurrent streaming turns (both protocols): ` +
    `wall ${(c.wallMs / 1000).toFixed(2)} s, p50 ${c.p50Ms.toFixed(0)} ms, ` +
    `p99 ${c.p99Ms.toFixed(0)} ms, ${c.errors} errors, ${c.crossTalk} cross-talk`,
    `${all} sequential turns (${s.turns} + ${s.confirmTurns} confirming): ` +
    `${(s.wallMs / 1000).toFixed(1)} s, ${s.errors} errors, ${s.crossTalk} cross-talk`,
    `idle RSS: ${mb(report.rssStartMb)} MB after warm-up, ${mb(first?.rssMb)} after the ` +
    `burst, ${mb(atSoak?.rssMb)} after ${s.turns} turns, ${mb(last?.rssMb)} after ${all}`,
    `peak RSS: ${mb(s.soakPeakMb)} MB over turns ${s.turns / 2}-${s.turns}, ` +
    `${mb(s.confirmPeakMb)} MB over ${s.turns}-${all} ` +
    `(${s.growthAfterSoakMb >= 0 ? "+" : ""}${mb(s.growthAfterSoakMb)} MB)`,
    `idle RSS by turn (MB): ${s.checkpoints.map((p) => `${p.turns}:${mb(p.rssMb)}`).join(" ")}`,
    `open fds: ${report.fdsStart} after warm-up, ${first?.fds} after the burst, ` +
    `${last?.fds} after ${all} turns (leak ${s.fdLeak})`,
    `children left running: ${report.leftoverChildren}`,
    report.failures.length ? `FAILED: ${report.failures.join("; ")}` : "all checks passed",
  ].join("\n") + "\n";
}

async function main(): Promise<number> {
  let options: Options | "help";
  try {
    options = parseOptions(Deno.args);
  } catch (err) {
    console.error(`load: ${(err as Error).message} (see --help)`);
    return 2;
  }
  if (options === "help") {
    console.log(HELP);
    return 0;
  }
  const report = await run(options, (line) => console.error(line));
  console.log(options.json ? JSON.stringify(report, null, 2) : formatReport(report, options));
  return report.failures.length ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main());
