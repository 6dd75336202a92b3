/**
 * Drives a council turn through a protocol's frame renderer into an SSE response: the shared
 * loop of both protocols (start frames, one batch per turn event, keep-alives, failure, abort).
 */
import type { Logger } from "@logtape/logtape";
import { type Clock, systemClock } from "../base/clock.ts";
import type { RunTurn, TurnEvent, TurnRequest } from "../council/types.ts";
import { type SseFrame, sseResponse } from "./sse_writer.ts";
import { untilAborted } from "./consume_turn.ts";

/** A protocol's pure mapping from turn events to SSE frames. */
export interface TurnRenderer {
  start(): SseFrame[];
  event(event: TurnEvent): SseFrame[];
  keepAlive(): SseFrame;
  /** The protocol's failure frames; the stream ends after them. */
  fail(message: string): SseFrame[];
  /** Whether the terminal frame has been produced. */
  readonly finished: boolean;
}

interface StreamTurnOptions {
  runTurn: RunTurn;
  request: TurnRequest;
  renderer: TurnRenderer;
  keepAliveMs: number;
  clock?: Clock;
  /** The HTTP request's signal (client disconnect). */
  requestSignal?: AbortSignal;
  log: Logger;
}

/** Shown to the host when a turn breaks; details stay in the log (never a stack). */
export const TURN_FAILED = "The council turn failed unexpectedly; see the gateway log for details.";

/**
 * Why a streamed turn stopped early: the client went away (its request's AbortError), or the
 * gateway aborted the request itself with a reason of its own (a shutdown).
 */
function abortedBecause(requestSignal?: AbortSignal): string {
  const reason = requestSignal?.aborted ? requestSignal.reason : undefined;
  return reason instanceof Error && reason.name !== "AbortError" && reason.message
    ? reason.message
    : "client disconnected";
}

export function streamTurn(options: StreamTurnOptions): Response {
  const { renderer, log } = options;
  return sseResponse({
    clock: options.clock ?? systemClock,
    keepAliveMs: options.keepAliveMs,
    keepAlive: () => renderer.keepAlive(),
    requestSignal: options.requestSignal,
    run: async (channel) => {
      channel.send(...renderer.start());
      try {
        const events = options.runTurn(options.request, channel.signal);
        for await (const event of untilAborted(events, channel.signal)) {
          channel.send(...renderer.event(event));
          if (renderer.finished) break;
        }
        if (channel.signal.aborted) {
          log.info("{why}; turn aborted", { why: abortedBecause(options.requestSignal) });
        } else if (!renderer.finished) {
          log.error("turn ended without a result");
          channel.send(...renderer.fail(TURN_FAILED));
        }
      } catch (error) {
        log.error("turn failed: {error}", { error: String(error) });
        channel.send(...renderer.fail(TURN_FAILED));
      }
    },
  });
}
