/** One keypress, one signal: copies of a signal within the window count once. */
import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import { oncePerBurst, SIGNAL_BURST_MS } from "../../src/server/signal_burst.ts";

Deno.test("signal burst: copies a launcher forwards count once; a later press counts again", () => {
  const clock = new FakeClock();
  let calls = 0;
  const onSignal = oncePerBurst(() => calls++, clock);
  onSignal(); // the terminal's SIGINT
  clock.advance(2);
  onSignal(); // the same keypress, forwarded by deno task
  assert.equal(calls, 1);
  clock.advance(SIGNAL_BURST_MS);
  onSignal(); // a deliberate second Ctrl-C
  assert.equal(calls, 2);
});
