/**
 * Issue 18 point 3: global limits. A flood of concurrent fanned-out turns (children at once),
 * the queue's 429 in each protocol, and concurrent 30 MB requests (peak RSS).
 */
import { messagesBody } from "../bench/client.ts";
import {
  type AttackContext,
  councilOf,
  type Gateway,
  processesMatching,
  sleep,
  startGateway,
  writeFake,
} from "./gateway.ts";
import type { Attack } from "./table.ts";

async function post(origin: string, path: string, body: unknown): Promise<Response> {
  return await fetch(`${origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const count = (statuses: number[]) =>
  [...new Set(statuses)].sort().map((s) => `${statuses.filter((x) => x === s).length}×${s}`)
    .join(", ");

async function withGateway<T>(
  context: AttackContext,
  config: Record<string, unknown>,
  fn: (gateway: Gateway) => Promise<T>,
): Promise<T> {
  const gateway = await startGateway(context, config);
  try {
    return await fn(gateway);
  } finally {
    await gateway.stop();
  }
}

const turnFlood: Attack = {
  id: "turn-flood",
  point: 3,
  attack: "100 concurrent fanned-out turns, 3 children each (30 in quick)",
  expected: "at most maxConcurrentTurns × councilSize (4 × 3 = 12) children at once; the " +
    "rest queue (32) or get 429",
  async run(context) {
    const fake = await writeFake(context, "flood", `sleep ${context.quick ? 0.3 : 1}\necho ok`);
    return await withGateway(context, {
      fanOutPolicy: "always",
      councilSize: 3,
      defaultAgents: councilOf(fake, 3),
    }, async (gateway) => {
      let peak = 0;
      let sampling = true;
      const sampler = (async () => {
        // `ps` reads the process table one entry at a time, so one snapshot can hold a child
        // that was exiting and one started just after. Counted are the children present in two
        // consecutive snapshots: their lifetimes overlap pairwise, so all were alive at once.
        let previous = new Set<number>();
        while (sampling) {
          const now = await processesMatching(fake);
          peak = Math.max(peak, now.filter((pid) => previous.has(pid)).length);
          previous = new Set(now);
          await sleep(50);
        }
      })();
      const n = context.quick ? 30 : 100;
      const statuses = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const res = await post(gateway.origin, "/v1/messages", messagesBody(`flood ${i}`));
          await res.body?.cancel();
          return res.status;
        }),
      );
      sampling = false;
      await sampler;
      return {
        observed: `at most ${peak} children at once; replies ${count(statuses)}`,
        pass: peak <= 12 && statuses.every((s) => s === 200 || s === 429),
      };
    });
  },
};

/** Reads a 429's retry-after and error fields. */
async function refusal(res: Response) {
  const body = await res.json().catch(() => ({}));
  return {
    retryAfter: res.headers.get("retry-after") ?? "none",
    type: body?.error?.type as string | undefined,
    code: body?.error?.code as string | undefined,
  };
}

const queueFull: Attack = {
  id: "queue-429",
  point: 3,
  attack: "turns past the queue (1 running, 1 queued) on /v1/messages and /v1/responses",
  expected: "HTTP 429, integer retry-after ≤ 60; rate_limit_error (Messages), the Responses " +
    "error shape with code rate_limit_exceeded",
  async run(context) {
    const fake = await writeFake(context, "busy", "sleep 2\necho ok");
    return await withGateway(context, {
      fanOutPolicy: "never",
      maxConcurrentTurns: 1,
      maxQueuedTurns: 1,
      defaultAgents: councilOf(fake, 1),
    }, async (gateway) => {
      const busy = [0, 1].map((i) => post(gateway.origin, "/v1/messages", messagesBody(`b${i}`)));
      await sleep(300);
      const messages = await refusal(
        await post(gateway.origin, "/v1/messages", messagesBody("one more")),
      );
      const responses = await post(gateway.origin, "/v1/responses", {
        model: "svc-council",
        input: "one more",
      });
      const status = responses.status;
      const openai = await refusal(responses);
      for (const res of await Promise.all(busy)) await res.body?.cancel();
      const integer = (v: string) => /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 60;
      return {
        observed: `Messages: retry-after ${messages.retryAfter}, ${messages.type}; Responses: ` +
          `${status}, retry-after ${openai.retryAfter}, ${openai.type}/${openai.code}`,
        pass: integer(messages.retryAfter) && messages.type === "rate_limit_error" &&
          status === 429 && integer(openai.retryAfter) && openai.code === "rate_limit_exceeded",
      };
    });
  },
};

const bodyFlood: Attack = {
  id: "body-flood",
  point: 3,
  attack: "10 concurrent 30 MB requests (4 × 8 MB in quick)",
  expected: "request bytes in flight bounded (maxBodyBytesInFlight, 64 MB): extra requests " +
    "get 429; peak RSS stays in the hundreds of MB",
  async run(context) {
    const fake = await writeFake(context, "sink", "echo ok");
    return await withGateway(context, {
      fanOutPolicy: "never",
      defaultAgents: councilOf(fake, 1),
    }, async (gateway) => {
      await sleep(1000);
      const before = await gateway.rssMb();
      const mb = context.quick ? 8 : 30;
      const text = "x".repeat(mb * 1024 * 1024 - 200);
      const body = JSON.stringify(messagesBody(text, false));
      let sampled = before;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const rss = await gateway.rssMb();
          if (Number.isFinite(rss)) sampled = Math.max(sampled, rss);
          await sleep(50);
        }
      })();
      const statuses = await Promise.all(
        Array.from({ length: context.quick ? 4 : 10 }, async () => {
          const res = await post(gateway.origin, "/v1/messages", body).catch(() => undefined);
          await res?.body?.cancel();
          return res?.status ?? 0;
        }),
      );
      sampling = false;
      await sampler;
      // The kernel's high-water mark where it tells (Linux), else the highest sample.
      const hwm = await gateway.peakRssMb();
      const peak = Number.isFinite(hwm) ? Math.max(hwm, sampled) : sampled;
      const gone = await Promise.race([gateway.exited, sleep(100).then(() => undefined)]);
      const log = gone === undefined ? "" : (await gateway.log()).slice(-300);
      return {
        observed: `RSS ${before.toFixed(0)} MB → peak ${peak.toFixed(0)} MB; replies ` +
          count(statuses) + (gone === undefined ? "" : `; the gateway exited (${gone}): ${log}`),
        pass: gone === undefined && peak < 1024 && statuses.every((s) => s === 200 || s === 429),
      };
    });
  },
};

export const LIMIT_ATTACKS: readonly Attack[] = [turnFlood, queueFull, bodyFlood];
