/**
 * Whether the database answers, as the last operation found it, and writes that must land
 * eventually retried in order until they do (a settle or a ledger record is never dropped while
 * the process lives; each is idempotent or written once).
 */
import type { Clock } from "../base/clock.ts";

export class Availability {
  #up = true;
  #since: number;
  #clock: Clock;
  #onChange: (up: boolean, error?: unknown) => void;

  constructor(clock: Clock, onChange: (up: boolean, error?: unknown) => void = () => {}) {
    this.#clock = clock;
    this.#since = clock.now();
    this.#onChange = onChange;
  }

  get up(): boolean {
    return this.#up;
  }

  /** How long the database has answered without a break (0 while it is down). */
  upForMs(): number {
    return this.#up ? this.#clock.now() - this.#since : 0;
  }

  /** Since when the database has been down (epoch ms), or undefined while it is up. */
  get downSince(): number | undefined {
    return this.#up ? undefined : this.#since;
  }

  /** Runs a database operation, noting whether the database answered. */
  async watch<T>(operation: () => Promise<T>): Promise<T> {
    try {
      const result = await operation();
      this.#set(true);
      return result;
    } catch (error) {
      if (isConnectionError(error)) this.#set(false, error);
      throw error;
    }
  }

  #set(up: boolean, error?: unknown): void {
    if (up === this.#up) return;
    this.#up = up;
    this.#since = this.#clock.now();
    this.#onChange(up, error);
  }
}

/** Errors that mean the database is not there (not a bad statement). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") return true;
  // SQLSTATE class 08 (connection exception), 57P0x (server shutting down), or a socket error.
  return code.startsWith("08") || code.startsWith("57P") || /^E[A-Z]+$/.test(code) ||
    code === "CONNECTION_CLOSED" || code === "CONNECTION_ENDED" ||
    code === "CONNECTION_DESTROYED" || code === "CONNECT_TIMEOUT";
}

/**
 * Runs queued writes one at a time, in order, each retried every `retryMs` until it lands (the
 * database may be down for a while). `drain` waits for all queued so far.
 */
export class RetryQueue {
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;
  #clock: Clock;
  #retryMs: number;
  #onError: (error: unknown, dropped: boolean) => void;
  #closed = false;

  /**
   * `onError` hears of a write's first failure; `dropped` when it is no connection failure (the
   * database refused the statement: retrying would hold every later write behind it forever).
   */
  constructor(
    clock: Clock,
    retryMs: number,
    onError: (error: unknown, dropped: boolean) => void,
  ) {
    this.#clock = clock;
    this.#retryMs = retryMs;
    this.#onError = onError;
  }

  get pending(): number {
    return this.#pending;
  }

  push(write: () => Promise<unknown>): void {
    this.#pending++;
    this.#tail = this.#tail.then(async () => {
      for (let failures = 0; !this.#closed; failures++) {
        try {
          await write();
          return;
        } catch (error) {
          if (!isConnectionError(error)) return this.#onError(error, true);
          if (failures === 0) this.#onError(error, false);
          await new Promise((resolve) =>
            this.#clock.setTimeout(() => resolve(null), this.#retryMs)
          );
        }
      }
    }).finally(() => this.#pending--);
  }

  drain(): Promise<void> {
    return this.#tail;
  }

  /** Stops retrying (shutdown): writes still failing are given up. */
  close(): void {
    this.#closed = true;
  }
}
