/**
 * The fake vendor's latency model: a profile (time to first token, tokens per second, answer
 * length, jitter) turned into a deterministic schedule of token times by a seeded PRNG, and the
 * injectable clock the server sleeps on (a virtual one for tests, so nothing sleeps for real).
 */

/** How fast one vendor's model answers. */
export interface LatencyProfile {
  /** Request received → first output token, ms. */
  ttftMs: number;
  /** Output tokens per second after the first (Infinity: all at once). */
  tokensPerSecond: number;
  /** Length of an unscripted answer, in tokens. */
  answerTokens: number;
  /** Relative spread of ttft and rate, 0…1 (0.2: each drawn within ±20 %). */
  jitter: number;
  /** Where the figures come from (a published source, or "test"). */
  source: string;
}

/** Answers at once: the default when no profile applies. */
export const INSTANT: LatencyProfile = {
  ttftMs: 0,
  tokensPerSecond: Infinity,
  answerTokens: 8,
  jitter: 0,
  source: "instant (no model time)",
};

/** When each output token of one reply is due, in ms after the request arrived. */
export interface Schedule {
  firstTokenMs: number;
  /** One entry per token; the first equals `firstTokenMs`. */
  tokenAtMs: number[];
}

/** A deterministic PRNG (mulberry32): the same seed gives the same draws, in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `value` moved by up to ±`jitter` of itself, by one draw. */
function jittered(value: number, jitter: number, random: () => number): number {
  return value * (1 + jitter * (2 * random() - 1));
}

/** The token times of a `tokens`-token reply under `profile`, drawing from `random`. */
export function schedule(profile: LatencyProfile, tokens: number, random: () => number): Schedule {
  const firstTokenMs = Math.max(0, jittered(profile.ttftMs, profile.jitter, random));
  const rate = jittered(profile.tokensPerSecond, profile.jitter, random);
  const gapMs = Number.isFinite(rate) && rate > 0 ? 1000 / rate : 0;
  const tokenAtMs = Array.from({ length: Math.max(1, tokens) }, (_, i) => firstTokenMs + i * gapMs);
  return { firstTokenMs, tokenAtMs };
}

/** What the server waits on: a time source and a sleep that an abort ends early. */
export interface PaceClock {
  /** Milliseconds, any origin. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Real time. */
export const realClock: PaceClock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (ms <= 0 || signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    }),
};

/** A clock whose sleeps return at once and move its time forward; it records every sleep. */
export class VirtualClock implements PaceClock {
  #now = 0;
  readonly sleeps: number[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.#now += Math.max(0, ms);
    return Promise.resolve();
  }
}

/** Splits text into token-sized pieces (about four characters, whole words kept together). */
export function tokenPieces(text: string): string[] {
  const pieces = text.match(/\s*\S{1,4}|\s+$/g) ?? [];
  return pieces.length ? pieces : [text];
}

/** An unscripted answer of `tokens` tokens (words of four characters with their space). */
export function fillerAnswer(tokens: number, seed = 0): string {
  const words = ["lore", "ipsu", "dolo", "amet", "elit", "sed ", "temp", "magn"];
  return Array.from({ length: tokens }, (_, i) => ` ${words[(i + seed) % words.length].trim()}`)
    .join("");
}
