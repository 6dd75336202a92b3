/**
 * Issue 18 point 1, against the real gateway: connections cannot bring the process down. Idle
 * floods, slowloris heads and bodies, idle keep-alive connections and file-descriptor exhaustion
 * are cut at their limits; a long streaming turn is not. Time-outs are short so each runs in
 * seconds; every loop is bounded.
 */
import assert from "node:assert/strict";
import { messagesBody, streamMessages } from "../../../scripts/bench/client.ts";
import type { GatewayProcess } from "../../support/gateway_process.ts";
import {
  Client,
  councilOf,
  inTempDir,
  sleep,
  statusOf,
  withGateway,
  writeFake,
} from "./attack_gateway.ts";

const LIMITS = { headerTimeoutMs: 500, bodyTimeoutMs: 800, idleTimeoutMs: 700 };
/** How late a cut may come after its time-out (a loaded machine's scheduling). */
const SLACK_MS = 1500;
const MAX_CONNECTIONS = 256;
const ignore = Deno.build.os === "windows";

/** Runs `fn` against a gateway with a one-fake council and the short time-outs. */
function attack<T>(
  config: Record<string, unknown>,
  fn: (gateway: GatewayProcess, dir: string) => Promise<T>,
  fileLimit?: number,
): Promise<T> {
  return inTempDir(async (dir) => {
    const fake = await writeFake(dir, "answer", "printf 'attack answer\\n'");
    const full = { defaultAgents: councilOf(fake), ...LIMITS, ...config };
    return await withGateway(dir, full, (gateway) => fn(gateway, dir), { fileLimit });
  });
}

/** Accepted and kept until the header time-out (408) or still open: not refused. */
const held = (clients: Client[]) =>
  clients.filter((c) => c.closedAt === undefined || statusOf(c.received) === "408").length;

/**
 * Opens `count` connections; returns them once the gateway has settled: no more of them closed
 * for half a second (at most 10 s), so the refused ones have had their answer.
 */
async function flood(port: number, count: number): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < count; i++) {
    try {
      clients.push(await Client.open(port));
    } catch { /* refused by the kernel: counts as not held */ }
  }
  const closed = () => clients.filter((c) => c.closedAt !== undefined).length;
  const until = performance.now() + 10_000;
  for (let last = -1; closed() !== last && performance.now() < until;) {
    last = closed();
    await sleep(500);
  }
  return clients;
}

Deno.test({
  name: "attack idle-flood: 300 idle connections; at most maxConnections held, the rest " +
    "refused with 503, all closed by the header time-out",
  ignore,
  fn: () =>
    attack({}, async (gateway) => {
      const clients = await flood(gateway.port, 300);
      const kept = held(clients);
      const refused = clients.filter((c) => statusOf(c.received) === "503").length;
      await sleep(LIMITS.headerTimeoutMs + 1000);
      const stillOpen = clients.filter((c) => c.closedAt === undefined).length;
      clients.forEach((c) => c.close());
      assert.ok(kept <= MAX_CONNECTIONS, `${kept} held`);
      assert.ok(refused > 0, "the connections past the cap get 503");
      assert.equal(stillOpen, 0, "open after the header time-out");
      const res = await fetch(`${gateway.origin}/v1/models`);
      await res.body?.cancel();
      assert.equal(res.status, 200, "the gateway serves after the flood");
    }),
});

/** Trickles `head` then one byte per 50 ms, for at most `forMs`; when and how it was closed. */
async function trickle(port: number, head: string, forMs: number) {
  const client = await Client.open(port);
  const started = performance.now();
  await client.write(head);
  while (client.closedAt === undefined && performance.now() - started < forMs) {
    await Promise.race([sleep(50), client.closed]);
    if (client.closedAt === undefined) await client.write("a");
  }
  client.close();
  await client.closed;
  return { ms: client.closedAt! - started, status: statusOf(client.received) };
}

for (const kind of ["head", "body"] as const) {
  const limit = kind === "head" ? LIMITS.headerTimeoutMs : LIMITS.bodyTimeoutMs;
  Deno.test({
    name: `attack slowloris-${kind}: a request ${kind} trickled a byte at a time is closed at ` +
      `the ${kind === "head" ? "header time-out with 408" : "body time-out"}`,
    ignore,
    fn: () =>
      attack({}, async (gateway) => {
        const host = `Host: 127.0.0.1:${gateway.port}\r\n`;
        const head = kind === "head"
          ? `POST /v1/messages HTTP/1.1\r\n${host}X-Slow: `
          : `POST /v1/messages HTTP/1.1\r\n${host}Content-Type: application/json\r\n` +
            "Content-Length: 100000\r\n\r\n{";
        const { ms, status } = await trickle(gateway.port, head, limit + 3 * SLACK_MS);
        assert.ok(ms <= limit + SLACK_MS, `closed after ${ms.toFixed(0)} ms (time-out ${limit})`);
        if (kind === "head") assert.equal(status, "408");
      }),
  });
}

Deno.test({
  name: "attack keepalive-idle: a keep-alive connection left idle after a response is closed " +
    "at the idle time-out",
  ignore,
  fn: () =>
    attack({}, async (gateway) => {
      const limit = LIMITS.idleTimeoutMs;
      const client = await Client.open(gateway.port);
      const started = performance.now();
      await client.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\n\r\n`);
      await Promise.race([client.closed, sleep(limit + 3 * SLACK_MS)]);
      const closedByServer = client.closedAt !== undefined;
      client.close();
      await client.closed;
      const ms = client.closedAt! - started;
      assert.equal(statusOf(client.received), "200");
      assert.ok(closedByServer, `still open after ${ms.toFixed(0)} ms`);
      assert.ok(ms >= limit - 50 && ms <= limit + SLACK_MS, `closed after ${ms.toFixed(0)} ms`);
    }),
});

Deno.test({
  name: "attack fd-exhaustion: 400 idle connections under `ulimit -n 256` are refused beyond " +
    "the lowered cap; the gateway keeps running and serves afterwards",
  ignore,
  fn: () =>
    attack({ headerTimeoutMs: 60_000 }, async (gateway) => {
      const clients = await flood(gateway.port, 400);
      const exitedEarly = await Promise.race([gateway.exited, sleep(200).then(() => undefined)]);
      clients.forEach((c) => c.close());
      assert.equal(exitedEarly, undefined, "the gateway exited under the flood");
      await sleep(500);
      const res = await fetch(`${gateway.origin}/v1/models`);
      await res.body?.cancel();
      assert.equal(res.status, 200);
      assert.ok(
        gateway.lines().some((l) => /maxConnections lowered from \d+ to \d+/.test(l)),
        "the cap is lowered to fit the file limit",
      );
    }, 256),
});

Deno.test({
  name: "attack sse-long: a streaming turn longer than the idle and header time-outs together " +
    "is not cut",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const waitS = (1.2 * (LIMITS.idleTimeoutMs + LIMITS.headerTimeoutMs)) / 1000;
      const fake = await writeFake(dir, "slow", `sleep ${waitS}\nprintf 'slow answer\\n'`);
      const config = { defaultAgents: councilOf(fake), ...LIMITS };
      await withGateway(dir, config, async (gateway) => {
        const turn = await streamMessages(gateway.origin, messagesBody("a long one"));
        assert.equal(turn.error, undefined);
        assert.match(turn.answer, /slow answer/);
      });
    }),
});
