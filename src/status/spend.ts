/**
 * Spend over time: totals since start and per-minute buckets over a sliding window, for the
 * dashboard's chart.
 */
import type { SpendFigures } from "./types.ts";

/** How far back the per-minute series reaches. */
const SPEND_WINDOW_MINUTES = 24 * 60;

const MINUTE_MS = 60_000;

export class SpendSeries {
  #usd = 0;
  #turns = 0;
  #calls = 0;
  /** Minute start (epoch ms) → figures. */
  #minutes = new Map<number, { usd: number; turns: number }>();

  /** A finished turn at `at` (epoch ms). */
  add(at: number, usd: number, calls: number): void {
    this.#usd += usd;
    this.#turns++;
    this.#calls += calls;
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const bucket = this.#minutes.get(minute) ?? { usd: 0, turns: 0 };
    bucket.usd += usd;
    bucket.turns++;
    this.#minutes.set(minute, bucket);
  }

  figures(now: number): SpendFigures {
    const oldest = Math.floor(now / MINUTE_MS) * MINUTE_MS - (SPEND_WINDOW_MINUTES - 1) * MINUTE_MS;
    for (const minute of this.#minutes.keys()) {
      if (minute < oldest) this.#minutes.delete(minute);
    }
    return {
      usd: this.#usd,
      turns: this.#turns,
      calls: this.#calls,
      perMinute: [...this.#minutes].sort(([a], [b]) => a - b).map(([minute, bucket]) => ({
        minute: new Date(minute).toISOString(),
        ...bucket,
      })),
    };
  }
}
