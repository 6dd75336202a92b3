/** InFlightTurns: a turn counts as running until its event stream has wound down. */
import assert from "node:assert/strict";
import { InFlightTurns } from "../../src/inflight.ts";
import type { RunTurn, TurnEvent } from "../../src/council/types.ts";
import { testRequest } from "../council/helpers.ts";

/** A turn that emits one progress line, then ends only after `release` (like killing children). */
function slowTurn(): { runTurn: RunTurn; release: () => void; ended: () => boolean } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let ended = false;
  const runTurn: RunTurn = async function* (): AsyncGenerator<TurnEvent> {
    try {
      yield { type: "progress", text: "working" };
      await released;
    } finally {
      await released;
      ended = true;
    }
  };
  return { runTurn, release, ended: () => ended };
}

Deno.test("inflight: idle waits for a turn whose consumer stopped early until the turn has ended", async () => {
  const turns = new InFlightTurns();
  assert.equal(turns.running, 0);
  await turns.idle();

  const turn = slowTurn();
  const events = turns.wrap(turn.runTurn)(testRequest(), new AbortController().signal);
  const iterator = events[Symbol.asyncIterator]();
  assert.deepEqual((await iterator.next()).value, { type: "progress", text: "working" });
  assert.equal(turns.running, 1);

  // The client leaves: the consumer asks the stream to return, without waiting for it.
  const returned = iterator.return!(undefined);
  let idle = false;
  const idlePromise = turns.idle().then(() => (idle = true));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(idle, false, "still winding down");
  assert.equal(turns.running, 1);

  turn.release();
  await returned;
  await idlePromise;
  assert.equal(turn.ended(), true);
  assert.equal(turns.running, 0);
});

Deno.test("inflight: the listener hears busy when the first turn starts and idle when the last ends", async () => {
  const heard: string[] = [];
  const turns = new InFlightTurns({
    busy: () => heard.push("busy"),
    idle: () => heard.push("idle"),
  });
  const first = slowTurn();
  const second = slowTurn();
  const signal = new AbortController().signal;
  const a = turns.wrap(first.runTurn)(testRequest(), signal)[Symbol.asyncIterator]();
  const b = turns.wrap(second.runTurn)(testRequest(), signal)[Symbol.asyncIterator]();
  await a.next();
  await b.next();
  assert.deepEqual(heard, ["busy"], "one busy for two overlapping turns");
  first.release();
  await a.next();
  assert.deepEqual(heard, ["busy"], "a turn still runs");
  second.release();
  await b.next();
  assert.deepEqual(heard, ["busy", "idle"]);
  const third = slowTurn();
  third.release();
  for await (const _ of turns.wrap(third.runTurn)(testRequest(), signal)) { /* drain */ }
  assert.deepEqual(heard, ["busy", "idle", "busy", "idle"]);
});
