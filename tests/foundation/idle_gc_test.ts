/**
 * Idle collection: one full collection the delay after the last turn (and request), never while
 * a turn runs, none after the server stopped; wired into the server per request and, through
 * InFlightTurns, per turn.
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

Deno.test("idle gc: collects once, the delay after the last work ended, and reports the heap", () => {
  const clock = new FakeClock();
  const c = collector(clock);
  c.idle.begin();
  c.idle.end();
  clock.advance(IDLE_COLLECT_MS - 1);
  assert.equal(c.calls(), 0, "not before the delay");
  clock.advance(1);
  assert.equal(c.calls(), 1);
  assert.deepEqual(c.collected.map((x) => [x.heapBeforeMb, x.heapAfterMb]), [[30, 20]]);
  clock.advance(10 * IDLE_COLLECT_MS);
  assert.equal(c.calls(), 1, "once per idle spell, not periodically");
  assert.equal(clock.pending, 0);
});

Deno.test("idle gc: work starting within the delay cancels the collection; the delay restarts", () => {
  const clock = new FakeClock();
  const c = collector(clock, { delayMs: 500 });
  c.idle.begin();
  c.idle.end();
  clock.advance(400);
  c.idle.begin();
  clock.advance(1000);
  assert.equal(c.calls(), 0, "no collection while work is in flight");
  c.idle.end();
  clock.advance(400);
  assert.equal(c.calls(), 0, "the delay counts from the last work's end");
  clock.advance(100);
  assert.equal(c.calls(), 1);
});

Deno.test("idle gc: with overlapping work, only the end of the last one arms the collection", () => {
  const clock = new FakeClock();
  const c = collector(clock, { delayMs: 500 });
  c.idle.begin();
  c.idle.begin();
  c.idle.end();
  clock.advance(5000);
  assert.equal(c.calls(), 0, "one piece of work is still in flight");
  c.idle.end();
  clock.advance(500);
  assert.equal(c.calls(), 1);
});

Deno.test("idle gc: a stream of short turns keeps one timer; collection comes a delay after the last", () => {
  const clock = new FakeClock();
  const c = collector(clock, { delayMs: 500 });
  for (let i = 0; i < 100; i++) {
    c.idle.begin();
    c.idle.end();
    assert.ok(clock.pending <= 1, `${clock.pending} timers pending`);
    clock.advance(10);
  }
  // The last turn ended 10 ms ago.
  clock.advance(489);
  assert.equal(c.calls(), 0, "the delay counts from the last turn's end");
  clock.advance(1);
  assert.equal(c.calls(), 1);
  assert.equal(clock.pending, 0);
});

Deno.test("idle gc: a request puts a pending collection off, but never arms one by itself", () => {
  const clock = new FakeClock();
  const c = collector(clock, { delayMs: 500 });
  c.idle.touch();
  clock.advance(5000);
  assert.equal(c.calls(), 0, "requests alone (e.g. polling /v1/models) cause no collection");
  assert.equal(clock.pending, 0);
  c.idle.begin();
  c.idle.end();
  clock.advance(300);
  c.idle.touch();
  clock.advance(499);
  assert.equal(c.calls(), 0, "the delay counts from the request");
  clock.advance(1);
  assert.equal(c.calls(), 1);
});

Deno.test("idle gc: stop cancels a pending collection and later idles schedule none", () => {
  const clock = new FakeClock();
  const c = collector(clock);
  c.idle.begin();
  c.idle.end();
  c.idle.stop();
  assert.equal(clock.pending, 0);
  c.idle.begin();
  c.idle.end();
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
  c.idle.begin();
  c.idle.end();
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

/** A FakeClock that tells when a timeout of `watchMs` (the collector's own delay) is set. */
class ArmWatchingClock extends FakeClock {
  #waiters: (() => void)[] = [];

  constructor(readonly watchMs: number) {
    super();
  }

  override setTimeout(fn: () => void, ms: number) {
    const id = super.setTimeout(fn, ms);
    if (ms === this.watchMs) this.#waiters.splice(0).forEach((resolve) => resolve());
    return id;
  }

  /**
   * Resolves when the collection is next armed; call it before what should arm it. Rejects if
   * that never happens (a bound, not a timing: arming follows the request at once).
   */
  armed(): Promise<void> {
    let bound: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([
      new Promise<void>((resolve) => this.#waiters.push(resolve)),
      new Promise<never>((_, reject) => {
        bound = setTimeout(() => reject(new Error("the collection was never armed")), 10_000);
      }),
    ]).finally(() => clearTimeout(bound));
  }
}

async function post(origin: string, path: string, body: Record<string, unknown>) {
  const response = await fetch(`${origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "claude-opus-4-8", max_tokens: 100, ...body }),
  });
  assert.equal(response.status, 200);
  return response;
}

const HELLO = { messages: [{ role: "user", content: "hello" }] };

Deno.test("idle gc + server: collects after the last turn and request, never during a turn, not after stopping", async () => {
  const clock = new ArmWatchingClock(700);
  const longTurn = gate();
  const reached = gate();
  let gated = false;
  const agents = fakeAgents(() => {
    if (gated) reached.open();
    return { text: "answered", gate: gated ? longTurn.promise : undefined };
  });
  let collections = 0;
  const server = startServer(testConfig({ port: 0, fanOutPolicy: "never", councilSize: 1 }), {
    runAgent: agents.runAgent,
    clock,
    graceMs: 0,
    collectGarbage: () => collections++,
    idleCollectMs: 700,
  });
  try {
    let armed = clock.armed();
    await (await post(server.origin, "/v1/messages", HELLO)).body?.cancel();
    await armed;
    clock.advance(699);
    assert.equal(collections, 0);
    clock.advance(1);
    assert.equal(collections, 1, "collected once nothing had been in flight for the delay");

    // A streamed turn outlives its request's handler; it still counts until it has ended.
    gated = true;
    const streamed = await post(server.origin, "/v1/messages", { ...HELLO, stream: true });
    await reached.promise;
    clock.advance(5000);
    assert.equal(collections, 1, "no collection while a streamed turn runs");
    gated = false;
    armed = clock.armed();
    longTurn.open();
    assert.match(await streamed.text(), /message_stop/);
    await armed;

    // Any request puts the collection off: count_tokens within the delay postpones it.
    clock.advance(500);
    await (await post(server.origin, "/v1/messages/count_tokens", HELLO)).body?.cancel();
    clock.advance(699);
    assert.equal(collections, 1, "the delay counts from the count_tokens request");
    clock.advance(1);
    assert.equal(collections, 2);

    armed = clock.armed();
    await (await post(server.origin, "/v1/messages", HELLO)).body?.cancel();
    await armed;
    await server.shutdown();
    clock.advance(5000);
    assert.equal(collections, 2, "stopping cancelled the pending collection");
  } finally {
    longTurn.open(); // a failed assertion must not leave the gated turn (and the test) hanging
    await server.shutdown();
  }
});
