/**
 * Gives the heap back once the gateway is idle: a while after its last turn (and request), one
 * full, memory-reducing garbage collection.
 *
 * Why: V8 frees the pages a burst of turns filled only at its next major collection, which an
 * idle process never reaches, and its own memory reducer re-arms only after more growth. So
 * without this an idle gateway keeps its last burst's garbage. The gateway knows exactly when it
 * is idle (no turn in flight, no request coming), which V8 cannot.
 */
import type { Clock, TimerId } from "./clock.ts";

/** Runs one full collection, synchronously. */
export type CollectGarbage = () => void;

/**
 * How long after the last turn and request to collect: longer than the quick steps of an
 * agent loop (the host reads a file, then asks again), so those are not collected between, and
 * short enough that a gateway left alone gives memory back at once. Slower steps (a long tool
 * run, a user's approval) do get a collection between them, in otherwise idle time.
 */
export const IDLE_COLLECT_MS = 1000;

/** What one collection did, for the debug log. */
export interface Collection {
  ms: number;
  heapBeforeMb: number;
  heapAfterMb: number;
}

export interface IdleCollectorOptions {
  collect: CollectGarbage;
  clock: Clock;
  delayMs?: number;
  /** Reads V8's committed heap, in bytes (injected for tests). */
  heapBytes?: () => number;
  onCollected?: (collection: Collection) => void;
  onError?: (error: unknown) => void;
}

/** Work that keeps the gateway busy (a turn): `begin` when it starts, `end` once. */
export interface Activity {
  begin(): void;
  end(): void;
}

/**
 * Collects once no turn has run and no request arrived for `delayMs` after a turn. Turns are
 * counted while in flight (`begin`/`end`); other requests (`touch`) only put a pending
 * collection off, since they are short and leave little garbage, and a gateway polled for its
 * models must not collect after every poll. Cheap per request: a clock read; at most one timer
 * is pending, set again for the rest of the delay when it fires early.
 */
export class IdleCollector implements Activity {
  readonly delayMs: number;
  #options: IdleCollectorOptions;
  #timer: TimerId | undefined;
  #inFlight = 0;
  #lastActivity = 0;
  #stopped = false;

  constructor(options: IdleCollectorOptions) {
    this.#options = options;
    this.delayMs = options.delayMs ?? IDLE_COLLECT_MS;
  }

  /** A turn started: no collection until it, and every other turn, has ended. */
  begin(): void {
    this.#inFlight++;
  }

  /** A turn ended: once none is in flight, collect after the delay unless work comes again. */
  end(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#lastActivity = this.#options.clock.now();
    if (this.#inFlight === 0) this.#arm(this.delayMs);
  }

  /** A request arrived: a pending collection waits until the delay has passed after it. */
  touch(): void {
    this.#lastActivity = this.#options.clock.now();
  }

  /** Cancels a pending collection for good (the server is stopping). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = this.#options.clock.setTimeout(() => {
      this.#timer = undefined;
      // A turn in flight arms again when it ends; work that came and went puts it off.
      if (this.#inFlight > 0) return;
      const idleMs = this.#options.clock.now() - this.#lastActivity;
      if (idleMs < this.delayMs) this.#arm(this.delayMs - idleMs);
      else this.#collect();
    }, ms);
  }

  #collect(): void {
    const { collect, heapBytes = v8HeapBytes, onCollected, onError } = this.#options;
    try {
      const before = heapBytes();
      const started = performance.now();
      collect();
      const ms = performance.now() - started;
      onCollected?.({ ms, heapBeforeMb: before / 2 ** 20, heapAfterMb: heapBytes() / 2 ** 20 });
    } catch (error) {
      onError?.(error);
    }
  }
}

function v8HeapBytes(): number {
  return Deno.memoryUsage().heapTotal;
}

/** The shape of V8's `gc` extension, present when V8 runs with `--expose-gc`. */
type V8Gc = (options?: { type?: "major" | "minor"; execution?: "sync"; flavor?: string }) => void;

/**
 * V8's collector, when the runtime exposes it (`--expose-gc`, which `deno task start` and the
 * compiled binary pass): a major collection of the "last resort" flavour, the one that reduces
 * memory (compacts, and returns emptied pages rather than pooling them). Undefined otherwise
 * (e.g. under `deno test`), and the gateway then leaves collection to V8.
 */
export function exposedGc(scope: object = globalThis): CollectGarbage | undefined {
  const gc = (scope as { gc?: unknown }).gc;
  if (typeof gc !== "function") return undefined;
  return () => (gc as V8Gc)({ type: "major", execution: "sync", flavor: "last-resort" });
}
