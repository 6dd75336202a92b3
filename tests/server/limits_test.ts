/**
 * Global limits: council turns at once (a bounded queue, then 429 with retry-after in each
 * protocol's envelope), request bytes in flight, and the throttle on repeated 401s.
 */
import assert from "node:assert/strict";
import type { Context } from "hono";
import { FakeClock } from "../support/fake_clock.ts";
import type { ProtocolHandler } from "../../src/protocol/protocol_handler.ts";
import { type AppLimits, createApp, type RequestEnv } from "../../src/server/app.ts";
import { AUTH_THROTTLE_RULE, AuthThrottle } from "../../src/server/middleware/auth_throttle.ts";
import { BodyBudget } from "../../src/server/middleware/body_budget.ts";
import { type Release, TurnSlots } from "../../src/server/middleware/turn_slots.ts";
import { startServer } from "../../src/server/wiring.ts";
import { eventually } from "../support/wait.ts";
import { echo, RawConnection, serverConfig, TOKEN, withLogs } from "../support/echo_server.ts";

/** As a client sends it: with its content-length. */
const post = (body: string, headers: Record<string, string> = {}) => ({
  method: "POST",
  body,
  headers: {
    "content-type": "application/json",
    "content-length": String(new TextEncoder().encode(body).length),
    ...headers,
  },
});

/** A handler that answers only when `open()` is called, counting calls. */
function gated() {
  let open!: () => void;
  let opened = new Promise<void>((resolve) => (open = resolve));
  const calls: string[] = [];
  const handler: ProtocolHandler = async (c: Context) => {
    calls.push(c.req.path);
    await opened;
    return c.json({ ok: true });
  };
  return {
    handler,
    calls,
    open: () => {
      open();
      opened = Promise.resolve();
    },
  };
}

function appWith(limits: AppLimits, handler: ProtocolHandler, overrides = {}) {
  return createApp({
    config: serverConfig(overrides),
    messages: handler,
    responses: handler,
    limits,
  });
}

Deno.test("turn slots: a slot each up to the cap, then a queue in arrival order, then full", async () => {
  const clock = new FakeClock();
  const slots = new TurnSlots({ maxConcurrent: 2, maxQueued: 2, clock });
  const signal = new AbortController().signal;
  const a = await (slots.acquire(signal) as Promise<Release>);
  await (slots.acquire(signal) as Promise<Release>);
  const granted: string[] = [];
  const c = (slots.acquire(signal) as Promise<Release>).then((r) => (granted.push("c"), r));
  const d = (slots.acquire(signal) as Promise<Release>).then((r) => (granted.push("d"), r));
  assert.deepEqual([slots.running, slots.queued], [2, 2]);
  const full = slots.acquire(signal);
  assert.ok("full" in full);
  assert.ok(Number.isInteger(full.retryAfterS) && full.retryAfterS >= 1, `${full.retryAfterS}`);
  a();
  a(); // a second release gives nothing back twice
  await c;
  assert.deepEqual(granted, ["c"]);
  assert.deepEqual([slots.running, slots.queued], [2, 1]);
  void d;
});

Deno.test("turn slots: a queued caller that leaves gives its place up", async () => {
  const slots = new TurnSlots({ maxConcurrent: 1, maxQueued: 1, clock: new FakeClock() });
  const held = await (slots.acquire(new AbortController().signal) as Promise<Release>);
  const leaving = new AbortController();
  const waiting = slots.acquire(leaving.signal) as Promise<Release>;
  assert.equal(slots.queued, 1);
  leaving.abort(new Error("client left"));
  await assert.rejects(waiting, /client left/);
  assert.equal(slots.queued, 0);
  assert.ok(!("full" in slots.acquire(new AbortController().signal)), "its place is free");
  held();
});

Deno.test("turn slots: retry-after follows the recent turn length, between 1 and 60 s", async () => {
  const clock = new FakeClock();
  const slots = new TurnSlots({ maxConcurrent: 1, maxQueued: 0, clock });
  const signal = new AbortController().signal;
  for (const ms of Array(30).fill(200)) {
    const release = await (slots.acquire(signal) as Promise<Release>);
    clock.advance(ms);
    release();
  }
  let held = await (slots.acquire(signal) as Promise<Release>);
  assert.deepEqual(slots.acquire(signal), { full: true, retryAfterS: 1 });
  held();
  for (let i = 0; i < 30; i++) {
    held = await (slots.acquire(signal) as Promise<Release>);
    clock.advance(10 * 60_000);
    held();
  }
  held = await (slots.acquire(signal) as Promise<Release>);
  assert.deepEqual(slots.acquire(signal), { full: true, retryAfterS: 60 });
  held();
});

Deno.test("limits: past the queue, 429 with an integer retry-after in each protocol's envelope", async () => {
  const gate = gated();
  const turns = new TurnSlots({ maxConcurrent: 1, maxQueued: 1, clock: new FakeClock() });
  const app = appWith({ turns }, gate.handler);
  const running = app.request("/v1/messages", post("{}"));
  const queued = app.request("/v1/responses", post("{}"));
  while (gate.calls.length < 1 || turns.queued < 1) await new Promise((r) => setTimeout(r, 1));
  const refused = await app.request("/v1/messages", post("{}"));
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  const anthropic = await refused.json();
  assert.equal(anthropic.type, "error");
  assert.equal(anthropic.error.type, "rate_limit_error");
  assert.match(anthropic.error.message, /busy; retry in \d+s/);
  const openai = await app.request("/v1/responses", post("{}"));
  assert.equal(openai.status, 429);
  const shape = await openai.json();
  assert.deepEqual(Object.keys(shape.error).sort(), ["code", "message", "param", "type"]);
  assert.equal(shape.error.type, "rate_limit_error");
  assert.equal(shape.error.code, "rate_limit_exceeded");
  // count_tokens and models are not turns.
  assert.equal((await app.request("/v1/messages/count_tokens", post("{}"))).status, 200);
  gate.open();
  assert.equal((await running).status, 200);
  assert.equal((await queued).status, 200);
  assert.deepEqual(gate.calls, ["/v1/messages", "/v1/responses"]);
});

Deno.test("limits: a turn holds its slot until its response has been sent", async () => {
  const turns = new TurnSlots({ maxConcurrent: 1, maxQueued: 0, clock: new FakeClock() });
  const app = appWith({ turns }, echo("m"));
  let sent!: () => void;
  const env: RequestEnv = { completed: new Promise((resolve) => (sent = resolve)), peer: "p" };
  const first = await app.request("/v1/messages", post("{}"), env);
  assert.equal(first.status, 200);
  assert.equal(turns.running, 1, "the handler returned, the response is still going out");
  assert.equal((await app.request("/v1/messages", post("{}"))).status, 429);
  sent();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(turns.running, 0);
  assert.equal((await app.request("/v1/messages", post("{}"))).status, 200);
});

Deno.test("body budget: bodies in flight share it; nothing in flight admits any body", () => {
  const budget = new BodyBudget(100);
  const a = budget.reserve(60)!;
  assert.equal(budget.reserve(60), null);
  const b = budget.reserve(40)!;
  assert.equal(budget.inUse, 100);
  a();
  a();
  assert.equal(budget.inUse, 40);
  b();
  const huge = budget.reserve(1000);
  assert.ok(huge, "alone, a body over the budget still fits");
  huge();
});

Deno.test("limits: request bytes in flight over the budget get 429; freed bytes admit again", async () => {
  const gate = gated();
  const bodies = new BodyBudget(100);
  const app = appWith({ bodies }, gate.handler);
  const body = JSON.stringify({ pad: "x".repeat(60) });
  const first = app.request("/v1/messages", post(body));
  while (gate.calls.length < 1) await new Promise((r) => setTimeout(r, 1));
  assert.equal(bodies.inUse, body.length);
  for (const path of ["/v1/messages", "/v1/responses", "/v1/messages/count_tokens"]) {
    const refused = await app.request(path, post(body));
    assert.equal(refused.status, 429, path);
    assert.equal(refused.headers.get("retry-after"), "1");
  }
  assert.equal((await app.request("/v1/messages/count_tokens", post("{}"))).status, 200);
  // Without a declared length a body counts as the largest allowed.
  const { "content-length": _, ...undeclared } = post("{}").headers;
  const unknown = await app.request("/v1/messages/count_tokens", {
    ...post("{}"),
    headers: undeclared,
  });
  assert.equal(unknown.status, 429);
  gate.open();
  assert.equal((await first).status, 200);
  assert.equal(bodies.inUse, 0);
  assert.equal((await app.request("/v1/messages", post(body))).status, 200);
});

Deno.test("auth throttle: 10 failures in a minute block the address for a minute", () => {
  const clock = new FakeClock();
  const throttle = new AuthThrottle({ ...AUTH_THROTTLE_RULE, capacity: 2, clock });
  for (let i = 0; i < 9; i++) throttle.failed("a");
  assert.equal(throttle.blockedForMs("a"), 0);
  clock.advance(60_000); // the first nine are now outside the window
  throttle.failed("a");
  assert.equal(throttle.blockedForMs("a"), 0);
  for (let i = 0; i < 9; i++) throttle.failed("a");
  assert.equal(throttle.blockedForMs("a"), 60_000);
  assert.equal(throttle.blockedForMs("b"), 0, "other addresses are not affected");
  clock.advance(59_999);
  assert.equal(throttle.blockedForMs("a"), 1);
  clock.advance(1);
  assert.equal(throttle.blockedForMs("a"), 0);
  for (let i = 0; i < 9; i++) throttle.failed("b");
  throttle.succeeded("b");
  throttle.failed("b");
  assert.equal(throttle.blockedForMs("b"), 0, "a success forgets earlier failures");
});

Deno.test("auth throttle: only `capacity` addresses are remembered", () => {
  const clock = new FakeClock();
  const throttle = new AuthThrottle({ ...AUTH_THROTTLE_RULE, capacity: 2, clock });
  for (let i = 0; i < 10; i++) throttle.failed("a");
  throttle.failed("b");
  throttle.failed("c"); // "a" is the least recently seen and goes
  assert.equal(throttle.blockedForMs("a"), 0);
});

Deno.test("limits: a blocked address gets 401 with retry-after whatever token it sends", async () => {
  const clock = new FakeClock();
  const authFailures = new AuthThrottle({ ...AUTH_THROTTLE_RULE, capacity: 100, clock });
  const app = appWith({ authFailures }, echo("m"), { token: TOKEN });
  const guesser: RequestEnv = { peer: "203.0.113.9" };
  const other: RequestEnv = { peer: "198.51.100.7" };
  const get = (token: string, env: RequestEnv) =>
    app.request("/v1/models", { headers: { "x-api-key": token } }, env);
  for (let i = 0; i < 10; i++) {
    const res = await get(`guess-${i}`, guesser);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("retry-after"), null);
  }
  const blocked = await get(TOKEN, guesser);
  assert.equal(blocked.status, 401, "the right token is not even checked");
  assert.equal(blocked.headers.get("retry-after"), "60");
  assert.match((await blocked.json()).error.message, /too many failed attempts.*retry in 60s/);
  assert.equal((await get(TOKEN, other)).status, 200);
  clock.advance(60_000);
  assert.equal((await get(TOKEN, guesser)).status, 200);
});

Deno.test("turn slots: new limits let waiting turns take the slots that opened", async () => {
  const slots = new TurnSlots({ maxConcurrent: 1, maxQueued: 2, clock: new FakeClock() });
  const signal = new AbortController().signal;
  await (slots.acquire(signal) as Promise<Release>);
  const waiting = slots.acquire(signal) as Promise<Release>;
  assert.equal(slots.queued, 1);
  slots.configure(2, 0);
  await waiting;
  assert.deepEqual([slots.running, slots.queued], [2, 0]);
  assert.ok("full" in slots.acquire(signal), "the new queue length holds too");
});

Deno.test("limits: a reload applies the new turn and connection limits at once", async () => {
  const gate = gated();
  const clock = new FakeClock();
  const config = serverConfig({ maxConcurrentTurns: 1, maxQueuedTurns: 0, idleTimeoutMs: 5000 });
  await withLogs(async () => {
    const server = startServer(config, { messages: gate.handler, responses: gate.handler, clock });
    const ask = () =>
      fetch(`${server.origin}/v1/messages`, post("{}")).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    const first = ask();
    await eventually(() => gate.calls.length === 1, "the first turn to run");
    assert.equal(await ask(), 429);
    server.reload({ ...config, maxConcurrentTurns: 2, idleTimeoutMs: 1000 });
    const second = ask();
    await eventually(() => gate.calls.length === 2, "a second turn to run beside it");
    gate.open();
    assert.deepEqual(await Promise.all([first, second]), [200, 200]);
    // The idle time-out is the new one: a kept-alive connection closes 1 s after its response.
    const client = await RawConnection.open(server.addr.port);
    await client.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:${server.addr.port}\r\n\r\n`);
    await eventually(() => client.received.includes("svc-council"), "the response");
    await eventually(() => server.connectionPhases().every((p) => p === "idle"), "idle ones");
    clock.advance(1000);
    await client.closedWithin();
    const done = server.shutdown();
    void server.shutdown();
    clock.advance(60_000);
    await done;
  });
});
