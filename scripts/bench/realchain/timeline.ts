/**
 * How one real-chain turn's time divides up, from three clocks on one machine: the client's
 * send and end of reply, the wrapper's start and exit stamps of every CLI process, and the
 * stub's request arrivals and reply times (all epoch milliseconds). Pure functions only.
 */
import type { StubRecord, Vendor } from "./stub.ts";

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
  /** Turn start → this process started. */
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

/**
 * The turn's timeline. `stamps` and `records` may hold other turns' entries: only processes
 * that started inside [startedAt, endedAt] count, and a process owns its vendor's requests that
 * arrived while it ran. The last process to start, once every other one had exited, is the
 * synthesizer.
 */
export function turnTimeline(
  startedAt: number,
  endedAt: number,
  stamps: readonly Stamp[],
  records: readonly StubRecord[],
): TurnTimeline {
  const mine = stamps
    .filter((s) => s.start >= startedAt && s.start <= endedAt)
    .sort((a, b) => a.start - b.start);
  const last = mine.at(-1);
  const synth = last && mine.length > 1 &&
      mine.slice(0, -1).every((s) => Number.isFinite(s.exit) && s.exit <= last.start)
    ? last
    : undefined;
  const processes = mine.map((stamp): ProcessTiming => {
    const exit = Number.isFinite(stamp.exit) ? stamp.exit : endedAt;
    const owned = records.filter((r) =>
      r.vendor === stamp.vendor && r.arrivedAt >= stamp.start && r.arrivedAt <= exit
    );
    const first = owned[0]?.arrivedAt ?? NaN;
    const replied = owned.map((r) => r.repliedAt).filter(Number.isFinite);
    const lastReply = replied.length ? Math.max(...replied) : NaN;
    return {
      label: stamp === synth ? "synth" : stamp.vendor,
      vendor: stamp.vendor,
      startMs: stamp.start - startedAt,
      firstRequestMs: first - stamp.start,
      modelMs: lastReply - first,
      tailMs: exit - lastReply,
      wallMs: exit - stamp.start,
      requests: owned.length,
      failedRequests: owned.filter((r) => r.status >= 400 || r.status === 0).length,
      exitStatus: stamp.status,
    };
  });
  const intervals = mine.map((s): [number, number] => [
    s.start,
    Number.isFinite(s.exit) ? s.exit : endedAt,
  ]);
  const wallMs = endedAt - startedAt;
  const children = intervals.slice(0, synth ? -1 : undefined);
  const lastChildExit = Math.max(...children.map(([, b]) => b));
  return {
    wallMs,
    processes,
    gatewayMs: wallMs - coveredMs(intervals, startedAt, endedAt),
    leadMs: mine.length ? mine[0].start - startedAt : wallMs,
    handoffMs: synth ? Math.max(0, synth.start - lastChildExit) : 0,
    closeMs: mine.length ? Math.max(0, endedAt - Math.max(...intervals.map(([, b]) => b))) : 0,
  };
}
