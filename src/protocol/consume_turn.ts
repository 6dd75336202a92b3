/**
 * Consuming a council turn from protocol code: iterate until the client leaves, or collect the
 * single `done` for a JSON reply.
 */
import type { Outcome, RunTurn, TurnEvent, TurnRequest, TurnUsage } from "../council/types.ts";

/**
 * Yields from `source` until it ends or `signal` aborts. On abort it stops waiting at once (a
 * turn that is slow to notice cannot hold the response open) and asks the source to return.
 */
export async function* untilAborted<T>(
  source: AsyncIterable<T>,
  signal: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  let onAbort = () => {};
  const aborted = new Promise<"aborted">((resolve) => {
    onAbort = () => resolve("aborted");
    if (signal.aborted) resolve("aborted");
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === "aborted" || next.done) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Not awaited: a generator blocked in an await only returns once it wakes up.
    Promise.resolve(iterator.return?.()).catch(() => {});
  }
}

/** The end of a turn as a JSON reply needs it. */
interface TurnResult {
  outcome: Outcome;
  usage: TurnUsage;
  /** No agent produced anything (see the `done` event's `failed`). */
  failed: boolean;
  /** The chosen call's tool_use id (see the `done` event's `toolUseId`). */
  toolUseId?: string;
}

/** A turn ended without its `done` event (aborted, or a council defect). */
export class TurnIncompleteError extends Error {
  override name = "TurnIncompleteError";
}

/**
 * Runs a turn to its `done` event, ignoring progress and deltas (non-streaming replies).
 * `clientSignal` aborts the turn only while it runs: Deno also aborts a request's signal once a
 * reply has been delivered, which must not reach a turn that already finished.
 */
export async function collectTurn(
  runTurn: RunTurn,
  request: TurnRequest,
  clientSignal: AbortSignal,
): Promise<TurnResult> {
  const turn = new AbortController();
  const onAbort = () => turn.abort(clientSignal.reason);
  if (clientSignal.aborted) onAbort();
  else clientSignal.addEventListener("abort", onAbort, { once: true });
  try {
    const events = runTurn(request, turn.signal);
    for await (const event of untilAborted<TurnEvent>(events, turn.signal)) {
      if (event.type === "done") {
        const { outcome, usage, toolUseId } = event;
        return { outcome, usage, failed: event.failed === true, toolUseId };
      }
    }
  } finally {
    clientSignal.removeEventListener("abort", onAbort);
  }
  throw new TurnIncompleteError(
    turn.signal.aborted ? "the client went away" : "the turn ended without a result",
  );
}
