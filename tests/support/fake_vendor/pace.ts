/**
 * Paces a reply on the fake vendor's clock: when each SSE frame is due under a latency schedule
 * (frames before the first token go with it, a frame carrying tokens goes when its last token is
 * due), and the streamed body that writes each frame at its time, stopping when the client goes.
 */
import type { PaceClock, Schedule } from "./latency.ts";
import { encodeFrame, type Frame } from "./reply.ts";

/** Each frame's due time in ms after the request arrived, `offsetMs` (a scripted delay) added. */
export function dueTimes(frames: readonly Frame[], plan: Schedule, offsetMs = 0): number[] {
  let consumed = 0;
  let last = plan.firstTokenMs;
  const lastIndex = plan.tokenAtMs.length - 1;
  return frames.map((frame) => {
    if (frame.tokens > 0) {
      consumed += frame.tokens;
      last = plan.tokenAtMs[Math.min(consumed - 1, lastIndex)];
    }
    return offsetMs + last;
  });
}

/** How many output tokens `frames` carry. */
export function tokenCount(frames: readonly Frame[]): number {
  return frames.reduce((sum, f) => sum + f.tokens, 0);
}

/** Sleeps until `dueMs` after `startedAt` on `clock`. */
export async function sleepUntil(
  clock: PaceClock,
  startedAt: number,
  dueMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const wait = startedAt + dueMs - clock.now();
  if (wait > 0) await clock.sleep(wait, signal);
}

/** What a paced stream reports (its first output token written, its last frame) and waits on. */
export interface PaceEvents {
  firstToken(): void;
  end(): void;
  /** The last output token waits for this (a test's gate). */
  holdLast?: Promise<unknown>;
}

/** A `text/event-stream` body writing each frame at its due time. */
export function pacedStream(
  frames: readonly Frame[],
  due: readonly number[],
  clock: PaceClock,
  startedAt: number,
  events: PaceEvents,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const cancelled = new AbortController();
  let next = 0;
  let tokens = 0;
  const lastToken = frames.findLastIndex((f) => f.tokens > 0);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next >= frames.length) {
        controller.close();
        return;
      }
      await sleepUntil(clock, startedAt, due[next], cancelled.signal);
      if (cancelled.signal.aborted) return;
      // Frames due together go in one write, as a server flushing its buffer would.
      let end = next;
      while (end < frames.length && due[end] <= due[next]) end++;
      if (events.holdLast && next <= lastToken && lastToken < end) {
        // Everything before the last token goes first; the last waits for the gate.
        if (next < lastToken) end = lastToken;
        else await events.holdLast;
      }
      const before = tokens;
      let text = "";
      for (; next < end; next++) {
        tokens += frames[next].tokens;
        text += encodeFrame(frames[next]);
      }
      controller.enqueue(encoder.encode(text));
      if (before === 0 && tokens > 0) events.firstToken();
      if (next >= frames.length) {
        events.end();
        controller.close();
      }
    },
    cancel() {
      cancelled.abort();
    },
  });
}
