/**
 * Idle collection: one full collection once no turn has run for the delay, never while a turn
 * runs, none after the server stopped; wired into the server through InFlightTurns.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../src/clock.ts";
import { type Collection, exposedGc, IDLE_COLLECT_MS, IdleCollector } from "../../src/idle_gc.ts";
import { startServer } from "../../src/server.ts";
import { fakeAgents, gate, testConfig } from "../council/helpers.ts";

function collector(clock: FakeClock, extra: { collect?: () => void; delayMs?: number } = {}) {
  const collected: Collection[] = [];
  const errors: unknown[] = [];
  let heap = 30 * 2 ** 20;
  let calls = 0;
  const idle = new IdleCollector({
    clock,
    delayMs: extra.delayMs,
    collect: extra.collect ?? (() => {
      calls++;
      heap = 20 * 2 ** 20;
    }),
    heapBytes: () => heap,
    onCollected: (collection) => collected.push(collection),
    onError: (error) => errors.push(error),
  });
  return { idle, collected, errors, calls: () => calls };
}

Deno.test("idle gc: collects once, the delay after the last turn ended, and reports the heap", () => {
  const clock = new FakeClock();
  const c = collector(clock);
  c.idle.busy();
  c.idle.idle();
  clock.advance(IDLE_COLLECT_MS - 1);
  assert.equal(c.calls(), 0, "not before the delay");
  clock.advance(1);
  assert.equal(c.calls(), 1);
  assert.equal(c.collected.length, 1);
  assert.equal(c.collected[0].heapBeforeMb, 30);
  assert.equal(c.collected[0].heapAfterMb, 20);
  assert.ok(c.collected[0].ms >= 0);
  clock.advance(10 * IDLE_COLLECT_MS);
  assert.equal(c.calls(), 1, "once per idle spell, not periodically");
  assert.equal(clock.pending, 0);
});

Deno.test("idle gc: a turn starting within the delay cancels the collection; the delay restarts", () => {
  const clock = new FakeClock();
  const c = collector(clock, { delayMs: 500 });
  c.idle.idle();
  clock.advance(400);
  c.idle.busy();
  clock.advance(1000);
  assert.equal(c.calls(), 0, "no collection while a turn runs");
  c.idle.idle();
  clock.advance(400);
  assert.equal(c.calls(), 0, "the delay counts from the last turn's end");
  clock.advance(100);
  assert.equal(c.calls(), 1);
});

Deno.test("idle gc: stop cancels a pending collection and later idles schedule none", () => {
  const clock = new FakeClock();
  const c = collector(clock);
  c.idle.idle();
  c.idle.stop();
  assert.equal(clock.pending, 0);
  c.idle.idle();
  assert.equal(clock.pending, 0);
  clock.advance(2 * IDLE_COLLECT_MS);
  assert.equal(c.calls(), 0);
});

Deno.test("idle gc: a collection that throws is reported, not thrown from the timer", () => {
  const clock = new FakeClock();
  const c = collector(clock, {
    collect: () => {
      throw new Error("no heap today");
    },
  });
  c.idle.idle();
  clock.advance(IDLE_COLLECT_MS);
  assert.equal(c.errors.length, 1);
  assert.match(String(c.errors[0]), /no heap today/);
  assert.equal(c.collected.length, 0);
});

Deno.test("idle gc: V8's collector is used only when exposed, as a memory-reducing major GC", () => {
  assert.equal(exposedGc({}), undefined);
  assert.equal(exposedGc({ gc: "not a function" }), undefined);
  const calls: unknown[] = [];
  const collect = exposedGc({ gc: (options: unknown) => calls.push(options) });
  assert.ok(collect);
  collect();
  assert.deepEqual(calls, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
});

async function ask(origin: string): Promise<void> {
  const response = await fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-opus-4-8",
      max_tokens: 100,
      messages: [{ role: "user", content: "hello" }],
    }),
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
}

Deno.test("idle gc + server: collects the idle delay after the last turn, never during one, not after stopping", async () => {
  const clock = new FakeClock();
  const longTurn = gate();
  let gated = false;
  const agents = fakeAgents(() => ({
    text: "answered",
    gate: gated ? longTurn.promise : undefined,
  }));
  let collections = 0;
  const server = startServer(testConfig({ port: 0, fanOutPolicy: "never", councilSize: 1 }), {
    runAgent: agents.runAgent,
    clock,
    graceMs: 0,
    collectGarbage: () => collections++,
    idleCollectMs: 700,
  });
  try {
    await ask(server.origin);
    clock.advance(300);
    // A second turn starts while the first one's collection is pending, and runs long.
    gated = true;
    const running = ask(server.origin);
    while (agents.calls.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    clock.advance(5000);
    assert.equal(collections, 0, "no collection while a turn runs");
    longTurn.open();
    await running;
    clock.advance(699);
    assert.equal(collections, 0, "the delay counts from the last turn's end");
    clock.advance(1);
    assert.equal(collections, 1);

    await ask(server.origin);
    await server.shutdown();
    clock.advance(5000);
    assert.equal(collections, 1, "stopping cancelled the pending collection");
  } finally {
    longTurn.open(); // a failed assertion must not leave the gated turn (and the test) hanging
    await server.shutdown();
  }
});
