/**
 * A streamed turn cut short says why in the log: the client went away, or the gateway itself
 * aborted the request (a shutdown cancelling in-flight turns), which is not a disconnect.
 */
import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { withLogs } from "../support/captured_logs.ts";
import { streamTurn, type TurnRenderer } from "../../src/protocol/stream_turn.ts";
import type { TurnEvent, TurnRequest } from "../../src/council/types.ts";
import { eventually } from "../support/wait.ts";

const renderer: TurnRenderer = {
  start: () => [{ event: "start", data: {} }],
  event: () => [],
  keepAlive: () => ({ event: "ping", data: {} }),
  fail: () => [{ event: "error", data: {} }],
  finished: false,
};

/** A turn that says nothing until it is aborted, then ends. */
function silentTurn(_: TurnRequest, signal: AbortSignal): AsyncIterable<TurnEvent> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () =>
        new Promise<IteratorResult<TurnEvent>>((resolve) =>
          signal.addEventListener("abort", () => resolve({ done: true, value: undefined }), {
            once: true,
          })
        ),
    }),
  };
}

async function abortLine(reason: unknown): Promise<string[]> {
  let found: string[] = [];
  await withLogs(async (records) => {
    const request = new AbortController();
    const response = streamTurn({
      runTurn: silentTurn,
      request: {} as TurnRequest,
      renderer,
      keepAliveMs: 60_000,
      requestSignal: request.signal,
      log: getLogger(["stream-turn-test"]),
    });
    const reader = response.body!.getReader();
    await reader.read(); // the start frame: the turn is running
    request.abort(reason);
    while (!(await reader.read()).done) { /* drain */ }
    const lines = () => records.map((r) => r.message.map(String).join(""));
    // The stream closes first; the turn's loop then sees the abort and says why.
    found = await eventually(() => lines().length > 0 && lines(), "the abort's log line");
  }, { category: ["stream-turn-test"], lowestLevel: "info" });
  return found;
}

Deno.test("stream turn: a shutdown's abort is logged as such, a client's as a disconnect", async () => {
  assert.deepEqual(await abortLine(new Error("server shutting down")), [
    "server shutting down; turn aborted",
  ]);
  assert.deepEqual(
    await abortLine(new DOMException("The request has been cancelled.", "AbortError")),
    [
      "client disconnected; turn aborted",
    ],
  );
});
