/**
 * A cap on council turns running at once: a turn takes a slot, or waits for one in a bounded
 * queue; when the queue is full the caller is told to retry, with an estimate of when.
 */
import type { Clock } from "../../base/clock.ts";

interface TurnSlotsOptions {
  maxConcurrent: number;
  maxQueued: number;
  clock: Clock;
}

/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

/** The queue is full: retry after this many seconds (an integer, 1–60). */
interface Full {
  full: true;
  retryAfterS: number;
}

/** Claude Code honours `retry-after` up to this many seconds. */
const MAX_RETRY_AFTER_S = 60;
/** Assumed turn length before any turn has finished. */
const FIRST_GUESS_MS = 10_000;

interface Waiter {
  grant: (release: Release) => void;
}

export class TurnSlots {
  #options: TurnSlotsOptions;
  #running = 0;
  #queue: Waiter[] = [];
  /** Moving average of how long a slot is held, for `retry-after`. */
  #heldMs = FIRST_GUESS_MS;

  constructor(options: TurnSlotsOptions) {
    this.#options = options;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /**
   * A slot now, or once one frees up (in arrival order); `Full` when the queue is full. Waiting
   * ends with a rejection when `signal` aborts (the client left).
   */
  acquire(signal: AbortSignal): Promise<Release> | Full {
    if (this.#running < this.#options.maxConcurrent) return Promise.resolve(this.#take());
    if (this.#queue.length >= this.#options.maxQueued) {
      return { full: true, retryAfterS: this.retryAfterS() };
    }
    return new Promise<Release>((resolve, reject) => {
      const onAbort = () => {
        this.#queue.splice(this.#queue.indexOf(waiter), 1);
        reject(signal.reason ?? new Error("aborted"));
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      if (signal.aborted) return reject(signal.reason ?? new Error("aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  /** New limits (a reload): waiting turns take the slots that opened; none is refused. */
  configure(maxConcurrent: number, maxQueued: number): void {
    this.#options = { ...this.#options, maxConcurrent, maxQueued };
    while (this.#running < maxConcurrent && this.#queue.length > 0) {
      this.#queue.shift()!.grant(this.#take());
    }
  }

  /**
   * Seconds until a place is likely free: the queue ahead, served `maxConcurrent` at a time,
   * at the recent average turn length; at least 1, at most what Claude Code honours.
   */
  retryAfterS(): number {
    const rounds = (this.#queue.length + 1) / this.#options.maxConcurrent;
    const seconds = Math.ceil((rounds * this.#heldMs) / 1000);
    return Math.min(MAX_RETRY_AFTER_S, Math.max(1, seconds));
  }

  #take(): Release {
    this.#running++;
    const started = this.#options.clock.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#heldMs = 0.8 * this.#heldMs + 0.2 * (this.#options.clock.now() - started);
      this.#running--;
      const next = this.#queue.shift();
      if (next) next.grant(this.#take());
    };
  }
}
