/**
 * Issue 18 point 3, against the real gateway: global limits hold. A flood of concurrent
 * fanned-out turns never runs more children than the turn cap allows, a full queue answers 429
 * in each protocol's shape, and concurrent large requests stay within the body budget.
 */
import assert from "node:assert/strict";
import { messagesBody } from "../../../scripts/bench/client.ts";
import {
  councilOf,
  countStatuses,
  inTempDir,
  memoryMb,
  post,
  processesMatching,
  sleep,
  withGateway,
  writeFake,
} from "./attack_gateway.ts";

const ignore = Deno.build.os === "windows";

Deno.test({
  name: "attack turn-flood: 30 concurrent fanned-out turns of 3 children run at most " +
    "maxConcurrentTurns × councilSize (4 × 3) children at once; the rest queue or get 429",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "flood", "sleep 0.3\necho ok");
      const config = { fanOutPolicy: "always", councilSize: 3, defaultAgents: councilOf(fake, 3) };
      await withGateway(dir, config, async (gateway) => {
        let peak = 0;
        let sampling = true;
        const sampler = (async () => {
          // `ps` reads the process table one entry at a time, so one snapshot can hold a child
          // that was exiting and one started just after. Counted are the children present in
          // two consecutive snapshots: their lifetimes overlap pairwise, so all were alive at once.
          let previous = new Set<number>();
          while (sampling) {
            const now = await processesMatching(fake);
            peak = Math.max(peak, now.filter((pid) => previous.has(pid)).length);
            previous = new Set(now);
            await sleep(50);
          }
        })();
        const statuses = await Promise.all(
          Array.from({ length: 30 }, async (_, i) => {
            const res = await post(gateway.origin, "/v1/messages", messagesBody(`flood ${i}`));
            await res.body?.cancel();
            return res.status;
          }),
        );
        sampling = false;
        await sampler;
        assert.ok(peak > 0, "the sampler saw the children");
        assert.ok(peak <= 12, `${peak} children at once`);
        assert.ok(statuses.every((s) => s === 200 || s === 429), countStatuses(statuses));
      });
    }),
});

/** A 429's retry-after and error fields. */
async function refusal(res: Response) {
  const body = await res.json().catch(() => ({}));
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after") ?? "none",
    type: body?.error?.type as string | undefined,
    code: body?.error?.code as string | undefined,
  };
}

Deno.test({
  name: "attack queue-429: turns past the queue get 429 with an integer retry-after ≤ 60, " +
    "rate_limit_error on Messages and rate_limit_exceeded on Responses",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "busy", "sleep 2\necho ok");
      const config = { maxConcurrentTurns: 1, maxQueuedTurns: 1, defaultAgents: councilOf(fake) };
      await withGateway(dir, config, async (gateway) => {
        const busy = [0, 1].map((i) => post(gateway.origin, "/v1/messages", messagesBody(`b${i}`)));
        await sleep(300);
        const messages = await refusal(
          await post(gateway.origin, "/v1/messages", messagesBody("one more")),
        );
        const responses = await refusal(
          await post(gateway.origin, "/v1/responses", { model: "svc-council", input: "more" }),
        );
        for (const res of await Promise.all(busy)) await res.body?.cancel();
        for (const reply of [messages, responses]) {
          assert.equal(reply.status, 429);
          assert.match(reply.retryAfter, /^\d+$/);
          const seconds = Number(reply.retryAfter);
          assert.ok(seconds >= 1 && seconds <= 60, `retry-after ${seconds}`);
        }
        assert.equal(messages.type, "rate_limit_error");
        assert.equal(responses.code, "rate_limit_exceeded");
      });
    }),
});

Deno.test({
  name: "attack body-flood: 4 concurrent 8 MB requests; bytes in flight stay bounded (200 or " +
    "429 each) and peak RSS stays under 1 GB",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "sink", "echo ok");
      await withGateway(dir, { defaultAgents: councilOf(fake) }, async (gateway) => {
        const text = "x".repeat(8 * 1024 * 1024 - 200);
        const body = JSON.stringify(messagesBody(text, false));
        const statuses = await Promise.all(
          Array.from({ length: 4 }, async () => {
            const res = await post(gateway.origin, "/v1/messages", body).catch(() => undefined);
            await res?.body?.cancel();
            return res?.status ?? 0;
          }),
        );
        const gone = await Promise.race([gateway.exited, sleep(100).then(() => undefined)]);
        assert.equal(gone, undefined, `the gateway exited: ${gateway.lines().slice(-5)}`);
        assert.ok(statuses.every((s) => s === 200 || s === 429), countStatuses(statuses));
        // The kernel's high-water mark (Linux; NaN elsewhere, where this part is not checked).
        const peak = await memoryMb(gateway.pid, "VmHWM");
        assert.ok(!(peak >= 1024), `peak RSS ${peak.toFixed(0)} MB`);
      });
    }),
});
