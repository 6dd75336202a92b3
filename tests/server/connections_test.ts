/**
 * The connection layer in front of the HTTP server: header, body and keep-alive time-outs,
 * streaming responses left alone, the cap on open connections, and accept failures survived.
 * Time is a FakeClock, so each time-out is checked to the millisecond without sleeping.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import { moduleLogger } from "../../src/base/log.ts";
import type { ProtocolHandler } from "../../src/protocol/protocol_handler.ts";
import { type RunningServer, startServer } from "../../src/server/wiring.ts";
import { Gate, gateResponse } from "../../src/server/connections.ts";
import { eventually } from "../support/wait.ts";
import { echo, RawConnection, serverConfig, withLogs } from "../support/echo_server.ts";

const LIMITS = { headerTimeoutMs: 1000, bodyTimeoutMs: 2000, idleTimeoutMs: 3000 };

async function withServer(
  fn: (server: RunningServer, clock: FakeClock) => Promise<void>,
  options: { maxConnections?: number; messages?: ProtocolHandler } = {},
): Promise<void> {
  const clock = new FakeClock();
  await withLogs(async () => {
    const server = startServer(
      serverConfig({ ...LIMITS, maxConnections: options.maxConnections ?? 256 }),
      { messages: options.messages ?? echo("m"), responses: echo("r"), clock },
    );
    try {
      await fn(server, clock);
    } finally {
      const done = server.shutdown();
      void server.shutdown(); // cancel at once: nothing here needs the grace period
      clock.advance(60_000);
      await done;
    }
  });
}

const phases = (server: RunningServer) => server.connectionPhases().join(",");

Deno.test("connections: a connection that sends nothing gets 408 at the header time-out", async () => {
  await withServer(async (server, clock) => {
    const client = await RawConnection.open(server.addr.port);
    await eventually(() => phases(server) === "head", "the connection to be accepted");
    clock.advance(999);
    assert.equal(server.openConnections(), 1);
    clock.advance(1);
    await client.closedWithin();
    assert.match(client.received, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    await eventually(() => server.openConnections() === 0, "the connection to be forgotten");
  });
});

Deno.test("connections: a head trickled byte by byte is cut at the header time-out", async () => {
  await withServer(async (server, clock) => {
    const client = await RawConnection.open(server.addr.port);
    await eventually(() => phases(server) === "head", "the connection to be accepted");
    for (const piece of ["GET /v1/models HTTP/1.1\r\n", "Host: 127.0.0.1\r\n", "X-A: 1\r\n"]) {
      await client.write(piece);
      clock.advance(300);
    }
    assert.equal(client.closed, false);
    clock.advance(100); // 1000 ms after the connection, whatever arrived meanwhile
    await client.closedWithin();
    assert.match(client.received, /^HTTP\/1\.1 408 /);
  });
});

Deno.test("connections: a body trickled after its head is cut at the body time-out", async () => {
  await withServer(async (server, clock) => {
    const client = await RawConnection.open(server.addr.port);
    await client.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${server.addr.port}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    await eventually(() => phases(server) === "body", "the head to be read");
    clock.advance(1999);
    await client.write("  ");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(client.closed, false, "bytes still arriving do not extend the time-out");
    clock.advance(1);
    await client.closedWithin();
    assert.equal(client.received, "", "mid-body, no reply of the gate's own");
  });
});

Deno.test("connections: an idle keep-alive connection closes at the idle time-out, not before", async () => {
  await withServer(async (server, clock) => {
    const client = await RawConnection.open(server.addr.port);
    const get = `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:${server.addr.port}\r\n\r\n`;
    await client.write(get);
    await eventually(() => phases(server) === "idle", "the first response");
    clock.advance(2999);
    await client.write(get); // a request within the window is served and restarts it
    await eventually(() => client.received.split("HTTP/1.1 200").length === 3, "two responses");
    await eventually(() => phases(server) === "idle", "the second response");
    clock.advance(2999);
    assert.equal(client.closed, false);
    clock.advance(1);
    await client.closedWithin();
    assert.equal(client.received.split("HTTP/1.1 ").length, 3, "no reply of the gate's own");
  });
});

Deno.test("connections: a streaming response outlives every time-out", async () => {
  let push!: (text: string) => void;
  let end!: () => void;
  const streaming: ProtocolHandler = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(new TextEncoder().encode(text));
          end = () => controller.close();
          push("event: ping\n\n");
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  await withServer(async (server, clock) => {
    const client = await RawConnection.open(server.addr.port);
    await client.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${server.addr.port}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    );
    await eventually(() => client.received.includes("event: ping"), "the stream to start");
    assert.equal(phases(server), "response");
    clock.advance(10 * 3000);
    push("event: later\n\n");
    await eventually(() => client.received.includes("event: later"), "a later event");
    assert.equal(client.closed, false);
    end();
    await eventually(() => phases(server) === "idle", "the response to end");
    client.close();
  }, { messages: streaming });
});

Deno.test("connections: beyond maxConnections new ones get 503 and close; the server goes on", async () => {
  await withServer(async (server) => {
    const port = server.addr.port;
    const first = await RawConnection.open(port);
    const second = await RawConnection.open(port);
    await eventually(() => server.openConnections() === 2, "two connections");
    const third = await RawConnection.open(port);
    await third.closedWithin();
    assert.match(third.received, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(third.received, /\r\nretry-after: 1\r\n/);
    assert.equal(server.openConnections(), 2);
    first.close();
    await eventually(() => server.openConnections() === 1, "a slot to free up");
    const fourth = await RawConnection.open(port);
    await fourth.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await eventually(() => fourth.received.includes("svc-council"), "the fourth to be served");
    second.close();
    fourth.close();
  }, { maxConnections: 2 });
});

Deno.test("connections: failed accepts (EMFILE) are retried, never fatal", async () => {
  const real = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let failures = 3;
  const flaky = {
    addr: real.addr,
    accept: () =>
      failures-- > 0
        ? Promise.reject(new Error("Too many open files (os error 24)"))
        : real.accept(),
    close: () => real.close(),
  } as unknown as Deno.Listener;
  const upstream = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const clock = new FakeClock();
  const lines = await withLogs(async () => {
    const gate = new Gate({
      listener: flaky,
      connectUpstream: () =>
        Deno.connect({ hostname: "127.0.0.1", port: (upstream.addr as Deno.NetAddr).port }),
      limits: { ...LIMITS, maxConnections: 10 },
      clock,
      log: moduleLogger("test"),
    });
    const client = await RawConnection.open((real.addr as Deno.NetAddr).port);
    while (gate.open === 0) {
      clock.advance(100); // the retry back-off
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.ok(failures < 0, "all three failures were met first");
    gate.stopAccepting();
    gate.closeConnections("all");
    await gate.finished;
    await client.closedWithin();
  });
  upstream.close();
  assert.ok(lines.some((l) => /WARN .*accepting a connection failed: Too many open files/.test(l)));
  assert.ok(
    lines.some((l) => /INFO .*accepting connections again after 3 failed attempts/.test(l)),
  );
});

Deno.test("connections: the gate's own reply carries both protocols' error fields", () => {
  const text = new TextDecoder().decode(gateResponse(503, "busy", 2));
  const [head, body] = text.split("\r\n\r\n");
  assert.match(head, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
  assert.match(head, /\r\nretry-after: 2\r\nconnection: close\r\n/);
  assert.match(head, new RegExp(`content-length: ${new TextEncoder().encode(body).length}`));
  assert.deepEqual(JSON.parse(body), {
    type: "error",
    error: { type: "overloaded_error", message: "busy", param: null, code: null },
  });
});
