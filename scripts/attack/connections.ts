/**
 * Issue 18 point 1: connections cannot bring the process down. Idle floods, slowloris heads
 * and bodies, idle keep-alive connections, file-descriptor exhaustion, and a long streaming turn
 * that must not be cut.
 */
import { messagesBody, streamMessages } from "../bench/client.ts";
import {
  type AttackContext,
  Client,
  councilOf,
  type Gateway,
  sleep,
  startGateway,
  statusOf,
  writeFake,
} from "./gateway.ts";
import type { Attack } from "./table.ts";

/** The time-outs the attacks run against: the defaults, but a shorter idle one; tiny in quick. */
function timeouts(context: AttackContext) {
  return context.quick
    ? { headerTimeoutMs: 500, bodyTimeoutMs: 800, idleTimeoutMs: 700 }
    : { headerTimeoutMs: 10_000, bodyTimeoutMs: 60_000, idleTimeoutMs: 30_000 };
}

async function withGateway<T>(
  context: AttackContext,
  config: Record<string, unknown>,
  fn: (gateway: Gateway) => Promise<T>,
  options: { fileLimit?: number } = {},
): Promise<T> {
  const fake = await writeFake(context, "answer", "printf 'attack answer\\n'");
  const gateway = await startGateway(context, {
    fanOutPolicy: "never",
    defaultAgents: councilOf(fake, 1),
    ...timeouts(context),
    ...config,
  }, options);
  try {
    return await fn(gateway);
  } finally {
    await gateway.stop();
  }
}

/** Accepted and kept until the header time-out (408) or still open: not refused. */
const held = (clients: Client[]) =>
  clients.filter((c) => c.closedAt === undefined || statusOf(c.received) === "408").length;

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

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

const idleFlood: Attack = {
  id: "idle-flood",
  point: 1,
  attack: "2,000 idle connections (300 in quick)",
  expected: "at most maxConnections (256) held, the rest refused (503); all closed by the " +
    "header time-out; gateway alive",
  run: (context) =>
    withGateway(context, {}, async (gateway) => {
      const clients = await flood(gateway.port, context.quick ? 300 : 2000);
      const kept = held(clients);
      const refused = clients.filter((c) => statusOf(c.received) === "503").length;
      await sleep(timeouts(context).headerTimeoutMs + 1000);
      const stillOpen = clients.filter((c) => c.closedAt === undefined).length;
      clients.forEach((c) => c.close());
      const alive = await gateway.rssMb().then(Number.isFinite);
      return {
        observed: `${clients.length} opened: ${kept} held, ${refused} refused with 503; ` +
          `${stillOpen} still open after the header time-out; gateway ${alive ? "alive" : "gone"}`,
        pass: kept <= 256 && stillOpen === 0 && alive,
      };
    }),
};

/** Trickles `head` then `trickle` one byte per `everyMs`, for at most `forMs`. */
async function trickle(
  port: number,
  head: string,
  everyMs: number,
  forMs: number,
): Promise<{ ms: number; status: string }> {
  const client = await Client.open(port);
  const started = performance.now();
  await client.write(head);
  while (client.closedAt === undefined && performance.now() - started < forMs) {
    await Promise.race([sleep(everyMs), client.closed]);
    if (client.closedAt === undefined) await client.write("a");
  }
  client.close();
  await client.closed;
  return { ms: client.closedAt! - started, status: statusOf(client.received) };
}

function slowloris(kind: "head" | "body"): Attack {
  return {
    id: `slowloris-${kind}`,
    point: 1,
    attack: `slowloris: a request ${kind} trickled a byte a second for 70 s (faster in quick)`,
    expected: `closed at the ${kind === "head" ? "header" : "body"} time-out` +
      (kind === "head" ? " with 408" : ""),
    run: (context) =>
      withGateway(context, {}, async (gateway) => {
        const limits = timeouts(context);
        const limit = kind === "head" ? limits.headerTimeoutMs : limits.bodyTimeoutMs;
        const host = `Host: 127.0.0.1:${gateway.port}\r\n`;
        const head = kind === "head"
          ? `POST /v1/messages HTTP/1.1\r\n${host}X-Slow: `
          : `POST /v1/messages HTTP/1.1\r\n${host}Content-Type: application/json\r\n` +
            "Content-Length: 100000\r\n\r\n{";
        const { ms, status } = await trickle(
          gateway.port,
          head,
          context.quick ? 50 : 1000,
          context.quick ? 3 * limit : 70_000,
        );
        const cut = ms < (context.quick ? 3 * limit : 70_000) - 100;
        return {
          observed: cut
            ? `closed after ${seconds(ms)} (status ${status}; time-out ${seconds(limit)})`
            : `still open after ${seconds(ms)}`,
          pass: cut && ms <= limit + 1500 && (kind === "body" || status === "408"),
        };
      }),
  };
}

const keepAliveIdle: Attack = {
  id: "keepalive-idle",
  point: 1,
  attack: "a keep-alive connection left idle after a response",
  expected: "closed at the idle time-out",
  run: (context) =>
    withGateway(context, {}, async (gateway) => {
      const limit = timeouts(context).idleTimeoutMs;
      const client = await Client.open(gateway.port);
      const started = performance.now();
      await client.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\n\r\n`);
      await Promise.race([client.closed, sleep(limit + 5000)]);
      const closedByServer = client.closedAt !== undefined;
      client.close();
      await client.closed;
      const ms = client.closedAt! - started;
      return {
        observed: `response ${statusOf(client.received)}, then ` +
          (closedByServer ? `closed after ${seconds(ms)}` : `still open after ${seconds(ms)}`) +
          ` (time-out ${seconds(limit)})`,
        pass: statusOf(client.received) === "200" && closedByServer && ms >= limit - 50 &&
          ms <= limit + 1500,
      };
    }),
};

const fdExhaustion: Attack = {
  id: "fd-exhaustion",
  point: 1,
  attack: "1,000 idle connections (400 in quick) to a gateway under `ulimit -n 256`",
  expected: "refused beyond the cap; the gateway keeps running and serves afterwards",
  run: (context) =>
    withGateway(context, { headerTimeoutMs: 60_000 }, async (gateway) => {
      const clients = await flood(gateway.port, context.quick ? 400 : 1000);
      const kept = held(clients);
      const exitedEarly = await Promise.race([gateway.exited, sleep(200).then(() => undefined)]);
      clients.forEach((c) => c.close());
      await sleep(500);
      const status = exitedEarly === undefined
        ? await fetch(`${gateway.origin}/v1/models`).then(async (r) => {
          await r.body?.cancel();
          return String(r.status);
        }, () => "no answer")
        : "exited";
      const lowered = /maxConnections lowered from \d+ to (\d+)/.exec(await gateway.log());
      return {
        observed: `${kept} held (cap ${lowered?.[1] ?? "not lowered"}); gateway ` +
          (exitedEarly === undefined ? "alive" : `exited with ${exitedEarly}`) +
          `; GET /v1/models afterwards: ${status}`,
        pass: exitedEarly === undefined && status === "200",
      };
    }, { fileLimit: 256 }),
};

const longStream: Attack = {
  id: "sse-long",
  point: 1,
  attack: "a streaming turn longer than the idle and header time-outs together",
  expected: "the stream is not cut: the turn completes",
  async run(context) {
    const limits = timeouts(context);
    const waitS = (1.2 * (limits.idleTimeoutMs + limits.headerTimeoutMs)) / 1000;
    const fake = await writeFake(context, "slow", `sleep ${waitS}\nprintf 'slow answer\\n'`);
    return await withGateway(context, { defaultAgents: councilOf(fake, 1) }, async (gateway) => {
      const turn = await streamMessages(gateway.origin, messagesBody("a long one"));
      return {
        observed: turn.error
          ? `cut: ${turn.error} after ${seconds(turn.wallMs)}`
          : `completed after ${seconds(turn.wallMs)}: ${JSON.stringify(turn.answer.trim())}`,
        pass: !turn.error && turn.answer.includes("slow answer"),
      };
    });
  },
};

export const CONNECTION_ATTACKS: readonly Attack[] = [
  idleFlood,
  slowloris("head"),
  slowloris("body"),
  keepAliveIdle,
  fdExhaustion,
  longStream,
];
