/**
 * Counts the council turns still running, each until its event stream has ended (so until its
 * children are killed and its spend booked), so that shutdown can wait for them.
 */
import type { RunTurn, TurnEvent } from "../council/types.ts";

export class InFlightTurns {
  #running = 0;
  #idle: (() => void)[] = [];

  /** Turns whose event stream has started and not yet ended. */
  get running(): number {
    return this.#running;
  }

  /**
   * `runTurn`, with each turn counted while it runs. A consumer that stops early (a client
   * that left) still leaves the turn counted until the turn itself has wound down.
   */
  wrap(runTurn: RunTurn): RunTurn {
    return (request, signal) => this.#track(runTurn(request, signal));
  }

  /** Resolves once no turn is running. */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async *#track(events: AsyncIterable<TurnEvent>): AsyncGenerator<TurnEvent> {
    this.#running++;
    try {
      yield* events;
    } finally {
      if (--this.#running === 0) this.#idle.splice(0).forEach((resolve) => resolve());
    }
  }
}
