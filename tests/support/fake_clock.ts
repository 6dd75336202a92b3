/** A manual clock for tests: time moves only when `advance` is called. */
import type { Clock, TimerId } from "../../src/base/clock.ts";

export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers = new Map<TimerId, { at: number; fn: () => void; every?: number }>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerId {
    const id = this.#nextId++ as unknown as TimerId;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(id: TimerId): void {
    this.#timers.delete(id);
  }

  setInterval(fn: () => void, ms: number): TimerId {
    const id = this.#nextId++ as unknown as TimerId;
    const every = Math.max(1, ms);
    this.#timers.set(id, { at: this.#now + every, fn, every });
    return id;
  }

  clearInterval(id: TimerId): void {
    this.#timers.delete(id);
  }

  /** Number of timers still pending (a leak check for tests). */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      let nextId: TimerId | undefined;
      let nextAt = Infinity;
      for (const [id, t] of this.#timers) {
        if (t.at <= end && t.at < nextAt) {
          nextAt = t.at;
          nextId = id;
        }
      }
      if (nextId === undefined) break;
      const timer = this.#timers.get(nextId)!;
      this.#now = timer.at;
      if (timer.every) timer.at += timer.every;
      else this.#timers.delete(nextId);
      timer.fn();
    }
    this.#now = end;
  }
}
