/**
 * Peer comparison: the same local stub upstream (a fixed 500-token Anthropic stream) hit
 * directly, through this gateway (one `anthropic` child, `fanOutPolicy: never`) and through
 * `@musistudio/claude-code-router` (npm, pinned; its `Anthropic` transformer passes the stream
 * through), side by side in one run. Two shapes of the same answer:
 *
 * - streamed: 10 tokens every 2 ms (like a fast model; ~100 ms per answer);
 * - burst: all 500 tokens as fast as the stub can write them (a stress case).
 *
 * Added latency = percentile through a proxy − the same percentile direct, for the first answer
 * token (a proxy's own first byte can come before it has asked the upstream anything) and for the
 * whole response: request sent → first token at the client, and request sent → end of the
 * response, each with its ratio to the router's (information only: the figure of record is the
 * real chain). Streamed, also the last token's travel time (each token carries the stub's write
 * time, so the stub's own timer jitter drops out): it shows what the turn's end costs. Plus turns per second at
 * 10 concurrent clients (burst). The client is raw_client.ts (one keep-alive TCP connection, reads
 * what the socket holds), so the figures are the servers' and not the client's per-chunk cost.
 * Opt-in (`--only peer`): the router comes from npm, installed into a cache outside the
 * repository.
 */
import { join } from "node:path";
import { epochOffset, messagesBody, streamMessages } from "../client.ts";
import { SseDecoder } from "../../../tests/support/sse_reader.ts";
import { type ServerProcess, serverProcess, spawnLogged, startGateway } from "../processes.ts";
import { answerOf, RawClient } from "../raw_client.ts";
import { type Figure, summarize, type Summary } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";
import { type Pace, STUB_ANSWER, STUB_TOKENS, unstamped } from "../stub_upstream.ts";
import { KEY_VARIABLE, startStub, stubCouncil } from "../stub_council.ts";

export const ROUTER_PACKAGE = "@musistudio/claude-code-router";
export const ROUTER_VERSION = "2.0.0";
const ROUTER_LABEL = `claude-code-router ${ROUTER_VERSION}`;
const CONCURRENT_CLIENTS = 10;
/** The gateway reads the stub's "key" from this variable of its environment. */
const FIRST_TOKEN = '"text_delta"';

/** Where the router is installed: `$COUNCIL_BENCH_CACHE`, else ~/.cache/council-gateway-bench. */
export function routerDir(env: (name: string) => string | undefined = Deno.env.get): string {
  const cache = env("COUNCIL_BENCH_CACHE") ??
    join(env("HOME") ?? ".", ".cache", "council-gateway-bench");
  return join(cache, `ccr-${ROUTER_VERSION}`);
}

/** The router's CLI script, installed with npm first when missing. */
async function ensureRouter(context: BenchContext): Promise<string> {
  const dir = routerDir();
  const cli = join(dir, "node_modules", ...ROUTER_PACKAGE.split("/"), "dist", "cli.js");
  if (await Deno.stat(cli).then(() => true, () => false)) return cli;
  context.log(`installing ${ROUTER_PACKAGE}@${ROUTER_VERSION} into ${dir}`);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "package.json"), '{ "private": true }\n');
  const out = await new Deno.Command("npm", {
    args: ["install", "--no-audit", "--no-fund", `${ROUTER_PACKAGE}@${ROUTER_VERSION}`],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  }).output().catch((err) => {
    throw new Error(`npm is needed to install ${ROUTER_PACKAGE}: ${(err as Error).message}`);
  });
  if (!out.success) {
    throw new Error(`npm install failed: ${new TextDecoder().decode(out.stderr).slice(-1000)}`);
  }
  return cli;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * The router's config: one provider (the stub, Anthropic format passed through) as the default
 * route, logging off (its default is on, at debug: that would only slow it down).
 */
export function routerConfig(stubOrigin: string, port: number): Record<string, unknown> {
  return {
    LOG: false,
    HOST: "127.0.0.1",
    PORT: port,
    API_TIMEOUT_MS: 600_000,
    Providers: [{
      name: "stub",
      api_base_url: `${stubOrigin}/v1/messages`,
      api_key: "bench",
      models: ["stub-model"],
      transformer: { use: ["Anthropic"] },
    }],
    Router: { default: "stub,stub-model" },
  };
}

/** Starts the router (`ccr start`, HOME in the bench's temp dir) and waits until it answers. */
async function startRouter(
  context: BenchContext,
  name: string,
  stubOrigin: string,
): Promise<ServerProcess> {
  const cli = await ensureRouter(context);
  const home = join(context.tempDir, `ccr-home-${name}`);
  await Deno.mkdir(join(home, ".claude-code-router"), { recursive: true });
  const port = freePort();
  await Deno.writeTextFile(
    join(home, ".claude-code-router", "config.json"),
    JSON.stringify(routerConfig(stubOrigin, port), null, 2),
  );
  const logPath = join(context.tempDir, `peer-router-${name}.log`);
  const env = { ...Deno.env.toObject(), HOME: home };
  const child = spawnLogged(["node", cli, "start"], logPath, home, env);
  const origin = `http://127.0.0.1:${port}`;
  const server = serverProcess(child, origin, logPath);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const turn = await streamMessages(origin, messagesBody("router warm-up"));
    if (!turn.error) return server;
    if (Date.now() > deadline) {
      await server.stop();
      const log = await Deno.readTextFile(logPath).catch(() => "");
      throw new Error(`the router did not answer: ${turn.error}; log:\n${log.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

type Label = "direct" | "gateway" | "router";

interface Timing {
  /** Request sent → the first token at the client, ms. */
  firstToken: number[];
  /** Request sent → end of the response, ms. */
  full: number[];
  /** Streamed only: the last token's write at the stub → its arrival at the client, ms. */
  lastToken: number[];
  errors: string[];
}

const noTiming = (): Timing => ({ firstToken: [], full: [], lastToken: [], errors: [] });

const STAMPED = /t(\d+)@(\d+)/g;

/** The answer's deltas as they arrive, and the last stamped token's travel time (ms). */
class StampReader {
  #decoder = new TextDecoder();
  #sse = new SseDecoder();
  answer = "";
  last = NaN;

  constructor(readonly epochOffset: number) {}

  push(bytes: Uint8Array, receivedAt: number): void {
    const epochMs = receivedAt + this.epochOffset;
    for (const event of this.#sse.push(this.#decoder.decode(bytes, { stream: true }))) {
      if (event.event !== "content_block_delta") continue;
      const delta = event.data?.delta;
      if (delta?.type !== "text_delta") continue;
      this.answer += delta.text;
      for (const match of (delta.text as string).matchAll(STAMPED)) {
        if (Number(match[1]) === STUB_TOKENS - 1) this.last = epochMs - Number(match[2]) / 1000;
      }
    }
  }
}

const BODY = JSON.stringify(messagesBody("peer comparison"));

/** Why a response is not the stub's answer, or undefined. */
function problemOf(status: number, body: Uint8Array, answer = answerOf(body)): string | undefined {
  if (status !== 200) return `HTTP ${status}`;
  if (unstamped(answer) !== STUB_ANSWER) {
    return `unexpected answer (${answer.length} chars): ${answer.slice(0, 80)}`;
  }
  return undefined;
}

async function timedTurn(client: RawClient, into: Timing, stamped: boolean): Promise<void> {
  try {
    if (!stamped) {
      const response = await client.post("/v1/messages", BODY, FIRST_TOKEN);
      const problem = problemOf(response.status, response.body);
      if (problem) into.errors.push(problem);
      else {
        into.firstToken.push(response.firstMarkerMs);
        into.full.push(response.fullMs);
      }
      return;
    }
    const reader = new StampReader(epochOffset());
    const response = await client.post(
      "/v1/messages",
      BODY,
      FIRST_TOKEN,
      (bytes, at) => reader.push(bytes, at),
    );
    const problem = problemOf(response.status, response.body, reader.answer);
    if (problem) into.errors.push(problem);
    else {
      into.firstToken.push(response.firstMarkerMs);
      into.full.push(response.fullMs);
      into.lastToken.push(reader.last);
    }
  } catch (err) {
    into.errors.push((err as Error).message);
  }
}

/** `CONCURRENT_CLIENTS` connections of back-to-back turns for `seconds`: turns per second. */
async function throughput(
  origin: string,
  seconds: number,
): Promise<{ rps: number; errors: number }> {
  const clients = await Promise.all(
    Array.from({ length: CONCURRENT_CLIENTS }, () => RawClient.connect(origin)),
  );
  let done = 0;
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  try {
    await Promise.all(clients.map(async (client) => {
      while (performance.now() < until) {
        try {
          const response = await client.post("/v1/messages", BODY, FIRST_TOKEN);
          if (problemOf(response.status, response.body)) errors++;
          else done++;
        } catch {
          errors++;
          return;
        }
      }
    }));
  } finally {
    for (const client of clients) client.close();
  }
  return { rps: done / ((performance.now() - started) / 1000), errors };
}

/** A proxy's added time: its percentile minus the direct run's, at p50 and p99. */
export function added(through: readonly number[], direct: readonly number[]): Summary {
  const a = summarize(through);
  const b = summarize(direct);
  return {
    n: a.n,
    p50: a.p50 - b.p50,
    p99: a.p99 - b.p99,
    min: a.min - b.min,
    max: a.max - b.max,
    mean: a.mean - b.mean,
  };
}

/** Our added latency as a multiple of the router's, at p50 (NaN when either is missing). */
export function peerRatio(ours: Summary, router: Summary): number {
  return Number.isFinite(ours.p50) && Number.isFinite(router.p50) && router.p50 !== 0
    ? ours.p50 / router.p50
    : NaN;
}

interface Variant {
  name: "streamed" | "burst";
  title: string;
  pace: Pace;
  /** Warm-up turns per target (full, quick): both runtimes' JITs must be warm. */
  warmUp: [number, number];
  /** Timed turns per target (full, quick). */
  turns: [number, number];
  /** Measure throughput at 10 concurrent clients too. */
  load: boolean;
}

const VARIANTS: Variant[] = [
  {
    name: "streamed",
    title: "streamed answer, 10 tokens / 2 ms",
    pace: { gapMs: 2, group: 10 },
    warmUp: [30, 3],
    turns: [100, 10],
    load: false,
  },
  {
    name: "burst",
    title: "500-token burst",
    pace: { gapMs: 0, group: 1 },
    warmUp: [300, 30],
    turns: [300, 30],
    load: true,
  },
];

async function runVariant(context: BenchContext, variant: Variant) {
  const servers: ServerProcess[] = [];
  const clients: RawClient[] = [];
  try {
    const stub = await startStub(context, variant.name, variant.pace);
    servers.push(stub);
    const gateway = await startGateway(context, stubCouncil(stub.origin));
    servers.push(gateway);
    const router = await startRouter(context, variant.name, stub.origin);
    servers.push(router);
    const origins: Record<Label, string> = {
      direct: stub.origin,
      gateway: gateway.origin,
      router: router.origin,
    };
    const labels = Object.keys(origins) as Label[];
    for (const label of labels) clients.push(await RawClient.connect(origins[label]));
    const timings = labels.map(noTiming);
    const scratch = noTiming();
    for (let i = 0; i < runs(context, ...variant.warmUp); i++) {
      for (const client of clients) await timedTurn(client, scratch, variant.pace.gapMs > 0);
    }
    const count = runs(context, ...variant.turns);
    for (let i = 0; i < count; i++) {
      // A different order each round, so drift and warm caches fall on everyone alike.
      for (let k = 0; k < labels.length; k++) {
        const at = (i + k) % labels.length;
        await timedTurn(clients[at], timings[at], variant.pace.gapMs > 0);
      }
      if ((i + 1) % 50 === 0) context.log(`peer ${variant.name} ${i + 1}/${count}`);
    }
    const load = new Map<Label, { rps: number; errors: number }>();
    if (variant.load) {
      const seconds = runs(context, 5, 2);
      for (const label of labels) {
        load.set(label, await throughput(origins[label], seconds));
        context.log(`peer ${variant.name} ${label}: ${load.get(label)!.rps.toFixed(1)} turns/s`);
      }
    }
    const [direct, ours, theirs] = timings;
    return { direct, ours, theirs, load, warmErrors: scratch.errors };
  } finally {
    for (const client of clients) client.close();
    await Promise.all(servers.map((s) => s.stop()));
  }
}

export const peer: Scenario = {
  name: "peer",
  description: `stub upstream direct vs this gateway vs ${ROUTER_PACKAGE}@${ROUTER_VERSION} ` +
    "(npm install)",
  async run(context) {
    Deno.env.set(KEY_VARIABLE, "bench");
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { routerVersion: ROUTER_VERSION };
    try {
      for (const variant of VARIANTS) {
        const { direct, ours, theirs, load, warmErrors } = await runVariant(context, variant);
        const errors = [...direct.errors, ...ours.errors, ...theirs.errors];
        const errorNote = errors.length
          ? `; ${errors.length} failed turns, first: ${errors[0]}`
          : "";
        const streamed = variant.pace.gapMs > 0;
        const addedFigure = (what: keyof Omit<Timing, "errors">, name: string): Figure => {
          const gatewayAdded = added(ours[what], direct[what]);
          const routerAdded = added(theirs[what], direct[what]);
          const ratio = peerRatio(gatewayAdded, routerAdded);
          const directSummary = summarize(direct[what]);
          return {
            scenario: "peer",
            name: `Peer (${variant.title}): added ${name}`,
            unit: "ms",
            gateway: gatewayAdded,
            baseline: { label: ROUTER_LABEL, value: routerAdded },
            ...(what === "lastToken" ? {} : { reference: "≤ 0.7 × router's (p50)" }),
            note: (what === "lastToken" ? `the last token's travel time direct ` : `direct `) +
              `${directSummary.p50.toFixed(2)} ms p50 / ` +
              `${directSummary.p99.toFixed(2)} ms p99; ${ours[what].length} turns each; ` +
              `${ratio.toFixed(2)} × the router's (p50)` + errorNote,
          };
        };
        figures.push(
          addedFigure("firstToken", "time to first token"),
          addedFigure("full", "full-response time"),
          ...(streamed ? [addedFigure("lastToken", "travel time of the last token")] : []),
        );
        if (variant.load) {
          const rps = (label: Label) => load.get(label)!.rps;
          const loadErrors = [...load.values()].reduce((sum, l) => sum + l.errors, 0);
          figures.push({
            scenario: "peer",
            name: `Peer (${variant.title}): turns/s at ${CONCURRENT_CLIENTS} concurrent clients`,
            unit: "",
            gateway: rps("gateway"),
            baseline: { label: ROUTER_LABEL, value: rps("router") },
            note: `stub direct ${rps("direct").toFixed(0)} turns/s` +
              (loadErrors ? `; ${loadErrors} failed turns under load` : ""),
          });
        }
        details[variant.name] = {
          pace: variant.pace,
          ...Object.fromEntries(
            ([["direct", direct], ["gateway", ours], ["router", theirs]] as const).map((
              [label, timing],
            ) => [label, {
              firstToken: summarize(timing.firstToken),
              full: summarize(timing.full),
              ...(streamed ? { lastToken: summarize(timing.lastToken) } : {}),
            }]),
          ),
          errors,
          warmErrors,
          throughput: Object.fromEntries(load),
        };
      }
    } finally {
      Deno.env.delete(KEY_VARIABLE);
    }
    return { figures, details };
  },
};
