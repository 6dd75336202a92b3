/**
 * One keypress, one signal: a terminal's Ctrl-C reaches a process started through launchers
 * (`npx … deno task start`) both from the terminal and forwarded by a launcher, a few
 * milliseconds apart. Signals that arrive within `windowMs` of the one before count once.
 */
import type { Clock } from "../base/clock.ts";

/** Longer than a launcher takes to forward a signal; shorter than a deliberate second press. */
export const SIGNAL_BURST_MS = 500;

/** `handler`, called once per burst of calls (each call within `windowMs` of the last). */
export function oncePerBurst(
  handler: () => void,
  clock: Pick<Clock, "now">,
  windowMs = SIGNAL_BURST_MS,
): () => void {
  let last = -Infinity;
  return () => {
    const now = clock.now();
    const repeat = now - last < windowMs;
    last = now;
    if (!repeat) handler();
  };
}
