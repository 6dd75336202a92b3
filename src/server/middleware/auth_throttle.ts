/**
 * Slows token guessing: a client address that fails authentication too often in a window is
 * refused for a while whatever it presents, so its guesses are not even checked.
 */
import type { Clock } from "../../base/clock.ts";

interface AuthThrottleOptions {
  /** Failures within `windowMs` that block an address. */
  maxFailures: number;
  windowMs: number;
  /** How long a blocked address is refused. */
  blockMs: number;
  /** Addresses remembered at most (the oldest is forgotten first). */
  capacity: number;
  clock: Clock;
}

/**
 * The rule: 10 failures within a minute block the address for a minute. A host retrying a
 * wrong token (Codex tries 5 times) still sees its own 401s first.
 */
export const AUTH_THROTTLE_RULE = { maxFailures: 10, windowMs: 60_000, blockMs: 60_000 } as const;

interface Record {
  failures: number[];
  blockedUntil: number;
}

export class AuthThrottle {
  #options: AuthThrottleOptions;
  #peers = new Map<string, Record>();

  constructor(options: AuthThrottleOptions) {
    this.#options = options;
  }

  /** Milliseconds `peer` is still refused for; 0 when it may try. */
  blockedForMs(peer: string): number {
    const record = this.#peers.get(peer);
    return record ? Math.max(0, record.blockedUntil - this.#options.clock.now()) : 0;
  }

  /** `peer` presented no valid token. */
  failed(peer: string): void {
    const now = this.#options.clock.now();
    const record = this.#peers.get(peer) ?? { failures: [], blockedUntil: 0 };
    this.#peers.delete(peer); // re-inserted last: the map's order is least recently seen first
    record.failures = record.failures.filter((at) => now - at < this.#options.windowMs);
    record.failures.push(now);
    if (record.failures.length >= this.#options.maxFailures) {
      record.blockedUntil = now + this.#options.blockMs;
      record.failures = [];
    }
    this.#peers.set(peer, record);
    if (this.#peers.size > this.#options.capacity) {
      this.#peers.delete(this.#peers.keys().next().value!);
    }
  }

  /** `peer` authenticated: its earlier failures are forgotten. */
  succeeded(peer: string): void {
    if (this.#peers.size > 0) this.#peers.delete(peer);
  }
}
