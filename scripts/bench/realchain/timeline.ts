/**
 * How one real-chain turn's time divides up, from three clocks on one machine: the client's
 * send and end of reply, the wrapper's start and exit stamps of every CLI process, and the
 * stub's request arrivals and reply times (all epoch milliseconds). Pure functions only.
 */
import type { StubRecord, Vendor } from "./upstream.ts";

/** One CLI process as the wrapper stamped it. */
export interface Stamp {
  vendor: Vendor;
  pid: number;
  start: number;
  /** NaN when it has not exited (yet). */
  exit: number;
  status?: number;
}

/** One CLI process of a turn, placed on the turn's clock. */
export interface ProcessTiming {
  /** The vendor, and "synth" for the synthesizer. */
  label: string;
  vendor: Vendor;
  /** Started before the turn (a warm pool's): its times count from the turn's start. */
  pooled: boolean;
  /** Turn start → this process started (negative when pooled). */
  startMs: number;
  /** Process start → its first upstream request (NaN: it made none). */
  firstRequestMs: number;
  /** First request arrived → last reply written: the model's time as the CLI saw it. */
  modelMs: number;
  /** Last reply written → the process exited. */
  tailMs: number;
  /** Start → exit. */
  wallMs: number;
  requests: number;
  /** Requests answered with an error status. */
  failedRequests: number;
  exitStatus?: number;
}

export interface TurnTimeline {
  wallMs: number;
  processes: ProcessTiming[];
  /**
   * The time in the turn when no CLI process was alive: before the first start, between the
   * last child's exit and the synthesizer's start, and after the last exit. The gateway's share.
   */
  gatewayMs: number;
  /** Of that: the request's arrival → the first process started. */
  leadMs: number;
  /** Of that: the last child exited → the synthesizer started (0 without a synthesizer). */
  handoffMs: number;
  /** Of that: the last process exited → the end of the reply. */
  closeMs: number;
}

/** Parses the wrapper's stamp lines ("<tag> <pid> start|exit <epoch s>[ <status>]"). */
export function parseStamps(text: string): Stamp[] {
  const byPid = new Map<number, Stamp>();
  for (const line of text.split("\n")) {
    const [tag, pidText, what, seconds, status] = line.trim().split(/\s+/);
    const pid = Number(pidText);
    const at = Number(seconds?.replace(",", ".")) * 1000;
    if (!tag || !Number.isFinite(pid) || !Number.isFinite(at)) continue;
    const stamp = byPid.get(pid) ??
      { vendor: tag as Vendor, pid, start: NaN, exit: NaN };
    if (what === "start") stamp.start = at;
    else if (what === "exit") {
      stamp.exit = at;
      stamp.status = Number(status);
    }
    byPid.set(pid, stamp);
  }
  return [...byPid.values()].filter((s) => Number.isFinite(s.start));
}

/** Total length of the union of intervals, each clipped to [from, to]. */
export function coveredMs(
  intervals: readonly [number, number][],
  from: number,
  to: number,
): number {
  const clipped = intervals
    .map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of clipped) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

/** An exit this long after the reply's end still belongs to the turn (a child's last moments). */
const EXIT_SLACK_MS = 2_000;

interface Placed {
  stamp: Stamp;
  /**
   * When it counts from: its start, or for a process started before the turn the moment it could
   * get its prompt (the turn's start; the synthesizer's: the last child's exit).
   */
  from: number;
  exit: number;
  owned: StubRecord[];
}

/**
 * The processes of a turn: those that made a request during it, and those started during it
 * that exited by its end (a child that failed before any request). A process started before the
 * turn (a warm pool's) counts from the turn's start. Idle pool processes and refills do neither.
 */
function placeProcesses(
  startedAt: number,
  endedAt: number,
  stamps: readonly Stamp[],
  records: readonly StubRecord[],
): Placed[] {
  return stamps.flatMap((stamp): Placed[] => {
    const exit = Number.isFinite(stamp.exit) ? stamp.exit : Infinity;
    if (stamp.start > endedAt || exit < startedAt) return [];
    const from = Math.max(stamp.start, startedAt);
    const owned = records.filter((r) =>
      (r.pid === undefined ? r.vendor === stamp.vendor : r.pid === stamp.pid) &&
      r.arrivedAt >= from && r.arrivedAt <= Math.min(exit, endedAt)
    );
    const failedEarly = stamp.start >= startedAt && exit <= endedAt + EXIT_SLACK_MS;
    if (owned.length === 0 && !failedEarly) return [];
    return [{ stamp, from, exit: Math.min(exit, endedAt + EXIT_SLACK_MS), owned }];
  }).sort((a, b) => a.stamp.start - b.stamp.start);
}

/**
 * The synthesizer: the process that asked the model to synthesize or select (the stub tells the
 * prompts apart). Without such a request: the process whose first request came after every other
 * one had exited. Asking first matters when a vendor fails: a pre-started synthesizer that was
 * passed over can exit after its stand-in has asked.
 */
function synthesizerOf(placed: readonly Placed[]): Placed | undefined {
  const asked = placed.find((p) =>
    p.owned.some((r) => r.kind === "synthesis" || r.kind === "selection")
  );
  if (asked) return asked;
  const firsts = placed.filter((p) => p.owned.length > 0);
  const last = firsts.sort((a, b) => a.owned[0].arrivedAt - b.owned[0].arrivedAt).at(-1);
  if (!last || placed.length < 2) return undefined;
  const others = placed.filter((p) => p !== last);
  return others.every((p) => p.exit <= last.owned[0].arrivedAt) ? last : undefined;
}

function timingOf(p: Placed, label: string, startedAt: number): ProcessTiming {
  const first = p.owned[0]?.arrivedAt ?? NaN;
  const replied = p.owned.map((r) => r.repliedAt).filter(Number.isFinite);
  const lastReply = replied.length ? Math.max(...replied) : NaN;
  return {
    label,
    vendor: p.stamp.vendor,
    pooled: p.stamp.start < startedAt,
    startMs: p.stamp.start - startedAt,
    firstRequestMs: first - p.from,
    modelMs: lastReply - first,
    tailMs: p.exit - lastReply,
    wallMs: p.exit - p.from,
    requests: p.owned.length,
    failedRequests: p.owned.filter((r) => r.status >= 400 || r.status === 0).length,
    exitStatus: p.stamp.status,
  };
}

/**
 * The turn's timeline. `stamps` and `records` may hold other turns' entries (see
 * `placeProcesses`); a process owns the requests that carry its pid (or, without one, its vendor's
 * requests that arrived while it ran). With a
 * process started before the turn, the gateway's share (and its lead and hand-off) cannot be
 * told from the processes' lives: NaN.
 */
export function turnTimeline(
  startedAt: number,
  endedAt: number,
  stamps: readonly Stamp[],
  records: readonly StubRecord[],
): TurnTimeline {
  const placed = placeProcesses(startedAt, endedAt, stamps, records);
  const synth = synthesizerOf(placed);
  const childExits = placed.filter((p) => p !== synth).map((p) => p.exit);
  // A pooled synthesizer could get its prompt only once the children were done.
  if (synth && synth.stamp.start < startedAt) synth.from = Math.max(synth.from, ...childExits);
  const processes = placed.map((p) =>
    timingOf(p, p === synth ? "synth" : p.stamp.vendor, startedAt)
  );
  const wallMs = endedAt - startedAt;
  const intervals = placed.map((p): [number, number] => [p.from, p.exit]);
  const pooled = processes.some((p) => p.pooled);
  const lastExit = Math.max(...intervals.map(([, b]) => b));
  return {
    wallMs,
    processes,
    gatewayMs: pooled ? NaN : wallMs - coveredMs(intervals, startedAt, endedAt),
    leadMs: pooled ? NaN : placed.length ? placed[0].from - startedAt : wallMs,
    handoffMs: pooled ? NaN : synth ? Math.max(0, synth.from - Math.max(...childExits)) : 0,
    closeMs: placed.length ? Math.max(0, endedAt - lastExit) : 0,
  };
}
