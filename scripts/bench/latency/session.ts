/**
 * The latency bench's session: several answer turns of one host session with CLI members, as a
 * user works (a pause between turns while they read), once with the warm pool as shipped and once
 * with `warmPool: off`. Per turn: the wall, and the start-up: the host's request until the last
 * CLI child's first model request (everything the turn spends before all its children are at
 * model work: isolated workspaces, spawning, each CLI's own start), as a share of the wall.
 */
import { messagesBody, streamMessages } from "../client.ts";
import { startGateway } from "../processes.ts";
import type { BenchContext } from "../scenario.ts";
import { type TreeMemory, treeMemory } from "./tree_memory.ts";
import { isSynthesis } from "./synthesis_calls.ts";
import { formatNumber, formatTable, quantile } from "../results.ts";
import type { Figure } from "../results.ts";
import type { FakeVendor, RecordedRequest } from "../../../tests/support/fake_vendor/mod.ts";

/** The APIs the CLI children speak (claude, codex, gemini): each child's first model call. */
const CHILD_APIS = ["messages", "responses", "gemini"] as const;

/** One measured session turn. */
export interface SessionTurn {
  wallMs: number;
  startUpMs: number;
}

/**
 * The host's request for turn `index` (0-based) of session `sessionId`: the same first message on
 * every turn, the transcript growing by one exchange per turn, and the project named as a host
 * names it, so fanned-out turns isolate their children.
 */
export function sessionTurnBody(
  sessionId: string,
  index: number,
  project: string,
): Record<string, unknown> {
  const body = messagesBody("Session turn 1: which notes file should we look at first?");
  body.system = `${body.system}\n<env>\nPrimary working directory: ${project}\n</env>`;
  const messages: unknown[] = [...body.messages as unknown[]];
  for (let turn = 1; turn <= index; turn++) {
    messages.push(
      { role: "assistant", content: `Answer ${turn}: start with notes.md.` },
      { role: "user", content: `Session turn ${turn + 1}: and what should we read next?` },
    );
  }
  return { ...body, messages, metadata: { user_id: JSON.stringify({ session_id: sessionId }) } };
}

/**
 * The start-up of a turn from the fake's records: from `startedAt` to the latest of the CLI
 * children's first model calls (the synthesizer's are not children's; a child skipped this turn,
 * cooling down, has none; NaN when no child made one).
 */
export function startUpOf(calls: readonly RecordedRequest[], startedAt: number): number {
  const children = calls.filter((r) => !isSynthesis(r));
  const firsts = CHILD_APIS.map((api) =>
    Math.min(...children.filter((r) => r.api === api).map((r) => r.arrivedAt))
  ).filter(Number.isFinite);
  return firsts.length ? Math.max(...firsts) - startedAt : NaN;
}

/** Runs one session of `turns` answer turns against `origin`; the pause follows each turn. */
export async function runSession(
  origin: string,
  vendor: FakeVendor,
  options: { sessionId: string; turns: number; pauseMs: number; project: string },
  log: (line: string) => void,
): Promise<{ turns: SessionTurn[]; problems: string[] }> {
  const turns: SessionTurn[] = [];
  const problems: string[] = [];
  for (let i = 0; i < options.turns; i++) {
    const before = vendor.requests.length;
    const startedAt = performance.now();
    const body = sessionTurnBody(options.sessionId, i, options.project);
    const turn = await streamMessages(origin, body);
    const startUpMs = startUpOf(vendor.requests.slice(before), startedAt);
    if (turn.error) problems.push(`${options.sessionId} turn ${i + 1}: ${turn.error}`);
    turns.push({ wallMs: turn.wallMs, startUpMs });
    log(
      `latency session ${options.sessionId} turn ${i + 1}/${options.turns}: wall ` +
        `${formatNumber(turn.wallMs)} ms, start-up ${formatNumber(startUpMs)} ms`,
    );
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
  }
  return { turns, problems };
}

const ms = (value: number) => `${formatNumber(value)} ms`;
const percent = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : "–");
/** The median over a session's turns from the second on (the first is every session's cold one). */
const laterMedian = (turns: readonly SessionTurn[], pick: (t: SessionTurn) => number) =>
  quantile(turns.slice(1).map(pick).filter(Number.isFinite), 0.5);

/** The session's table and figures: per turn, and the medians of turns 2+ with and without pool. */
export function sessionReport(
  pooled: readonly SessionTurn[],
  cold: readonly SessionTurn[],
): { table: string; figures: Figure[] } {
  const rows = pooled.map((turn, i) => [
    String(i + 1),
    ms(turn.wallMs),
    ms(turn.startUpMs),
    percent(turn.startUpMs / turn.wallMs),
    ms(cold[i]?.wallMs ?? NaN),
    ms(cold[i]?.startUpMs ?? NaN),
    percent((cold[i]?.startUpMs ?? NaN) / (cold[i]?.wallMs ?? NaN)),
  ]);
  const share = (turns: readonly SessionTurn[]) =>
    laterMedian(turns, (t) => t.startUpMs / t.wallMs);
  const wallOf = (turns: readonly SessionTurn[]) => laterMedian(turns, (t) => t.wallMs);
  const table = "Latency, CLI members, one session of answer turns (start-up: the host's request " +
    "until the last CLI child's first model request):\n" +
    formatTable(
      ["turn", "wall (pool)", "start-up (pool)", "share", "wall (no pool)", "start-up", "share"],
      rows,
    );
  const figure = (name: string, unit: string, value: number, extra: Partial<Figure> = {}) => ({
    scenario: "latency",
    name: `Latency (CLI), session turns 2+: ${name}`,
    unit,
    gateway: value,
    ...extra,
  });
  const pooledShare = share(pooled);
  return {
    table,
    figures: [
      figure("start-up / turn wall, warm pool as shipped", "%", pooledShare * 100, {
        target: { text: "≤ 5 %", pass: pooledShare <= 0.05 },
        note: `median start-up ${ms(laterMedian(pooled, (t) => t.startUpMs))}`,
      }),
      figure("start-up / turn wall, warmPool: off", "%", share(cold) * 100, {
        note: `median start-up ${ms(laterMedian(cold, (t) => t.startUpMs))}`,
      }),
      figure("turn wall, warm pool / warmPool: off", "×", wallOf(pooled) / wallOf(cold), {
        note: `${ms(wallOf(pooled))} vs ${ms(wallOf(cold))}`,
      }),
    ],
  };
}

/** The pooled gateway's idle stretch: longer than any pause, short enough to see the reap. */
const REAP_IDLE_MS = 20_000;

/** The pooled gateway's process tree: before any turn, with its pool full, after the reap. */
export interface PoolMemory {
  before: TreeMemory;
  full: TreeMemory;
  reaped: TreeMemory;
}

/**
 * The session measured twice, on gateways of their own (the CLI council with the warm pool as
 * shipped, then with `warmPool: off`), one after the other so neither's refills load the other's
 * turns; and the pooled gateway's memory before, with its pool full, and once it is reaped (its
 * idle stretch set to 20 s instead of the shipped 5 minutes, which no pause between turns
 * reaches). `LATENCY_SESSION_TURNS` (default 4; 0 skips it), `LATENCY_SESSION_PAUSE_MS` (5 s).
 */
export async function measureSessions(
  context: BenchContext,
  council: Record<string, unknown>,
  vendor: FakeVendor,
  project: string,
): Promise<
  { table: string; figures: Figure[]; problems: string[]; memory?: PoolMemory } | undefined
> {
  const turns = Number(Deno.env.get("LATENCY_SESSION_TURNS") ?? 4);
  if (!(turns >= 2)) return undefined;
  const pauseMs = Number(Deno.env.get("LATENCY_SESSION_PAUSE_MS") ?? 5000);
  const measured: Record<"on" | "off", SessionTurn[]> = { on: [], off: [] };
  const problems: string[] = [];
  let memory: PoolMemory | undefined;
  for (const pool of ["on", "off"] as const) {
    const warmPool = pool === "on" ? { idleMs: REAP_IDLE_MS } : "off";
    const gateway = await startGateway(context, { ...council, warmPool });
    try {
      const before = await treeMemory(gateway.pid);
      const sessionId = `latency-session-pool-${pool}`;
      const run = await runSession(
        gateway.origin,
        vendor,
        { sessionId, turns, pauseMs, project },
        context.log,
      );
      measured[pool] = run.turns;
      problems.push(...run.problems);
      if (pool === "on") {
        const full = await treeMemory(gateway.pid);
        await new Promise((resolve) => setTimeout(resolve, REAP_IDLE_MS + 5_000));
        memory = { before, full, reaped: await treeMemory(gateway.pid) };
        context.log(`latency session: pool memory ${JSON.stringify(memory)}`);
      }
    } finally {
      await gateway.stop();
    }
  }
  const report = sessionReport(measured.on, measured.off);
  return { ...report, figures: [...report.figures, ...memoryFigures(memory)], problems, memory };
}

function memoryFigures(memory: PoolMemory | undefined): Figure[] {
  if (!memory) return [];
  const figure = (name: string, tree: TreeMemory): Figure => ({
    scenario: "latency",
    name: `Latency (CLI), warm pool memory: ${name}`,
    unit: "MB",
    gateway: tree.pssMb,
    note: `PSS of ${tree.processes} processes, ${tree.children} of them children`,
  });
  return [
    figure("gateway before any turn", memory.before),
    figure("after the session, pool full", memory.full),
    {
      // Idle memory is the gateway's own again: no child is left waiting.
      ...figure("after the reap", memory.reaped),
      target: { text: "no child left", pass: memory.reaped.children === 0 },
    },
  ];
}
