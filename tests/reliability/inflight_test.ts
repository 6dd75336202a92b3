/** InFlightTurns: a turn counts as running until its event stream has wound down. */
import assert from "node:assert/strict";
import { InFlightTurns } from "../../src/server/inflight.ts";
import type { RunTurn, TurnEvent } from "../../src/council/types.ts";
import { testRequest } from "../support/scripted_agents.ts";

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

Deno.test("inflight: a turn that throws, one left early and one never iterated leave none running", async () => {
  const turns = new InFlightTurns();
  const signal = new AbortController().signal;
  const throwing: RunTurn = async function* (): AsyncGenerator<TurnEvent> {
    yield { type: "progress", text: "working" };
    throw new Error("council defect");
  };
  await assert.rejects(async () => {
    for await (const _ of turns.wrap(throwing)(testRequest(), signal)) { /* drain */ }
  }, /council defect/);
  assert.equal(turns.running, 0);

  const left = slowTurn();
  const iterator = turns.wrap(left.runTurn)(testRequest(), signal)[Symbol.asyncIterator]();
  await iterator.next();
  const returned = iterator.return!(undefined);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(turns.running, 1, "counted until wound down");
  left.release();
  await returned;
  assert.equal(turns.running, 0);

  turns.wrap(slowTurn().runTurn)(testRequest(), signal); // never iterated: never started
  assert.equal(turns.running, 0);
  await turns.idle();
});
