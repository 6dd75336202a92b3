/**
 * Issue 18 point 9, against the real gateway: tokens worth the name. A short token on a
 * non-loopback bind is refused at start; guessing a short token over loopback is throttled.
 */
import assert from "node:assert/strict";
import { spawnGateway } from "../../support/gateway_process.ts";
import { councilOf, inTempDir, withGateway, writeFake } from "./attack_gateway.ts";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** The 2-character token of the report. */
const SHORT_TOKEN = "q7";
const ignore = Deno.build.os === "windows";

Deno.test({
  name: "attack short-token: `serve` on 0.0.0.0 with a 2-character token is a config error " +
    "(exit 2), nothing bound",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const started = await spawnGateway(dir, { host: "0.0.0.0" }, {
        SVC_GATEWAY_TOKEN: SHORT_TOKEN,
      }).catch((error: Error) => error);
      if (!(started instanceof Error)) {
        await started.stop();
        assert.fail("started and listened on every interface");
      }
      assert.match(started.message, /gateway exited \(2\)/);
      assert.match(started.message, /config: host: /);
    }),
});

/** Every 2-character token over ALPHABET, in order. */
function* candidates(): Generator<string> {
  for (const a of ALPHABET) for (const b of ALPHABET) yield a + b;
}

Deno.test({
  name: "attack token-guess: guessing a 2-character token over loopback, 8 requests at a time " +
    "for 3 s, fails: after 10 failures the address is refused unchecked",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "answer", "echo ok");
      const env = { SVC_GATEWAY_TOKEN: SHORT_TOKEN };
      await withGateway(dir, { defaultAgents: councilOf(fake) }, async (gateway) => {
        const started = performance.now();
        const queue = candidates();
        let tries = 0;
        let throttled = 0;
        let found: string | undefined;
        const worker = async () => {
          while (!found && performance.now() - started < 3000) {
            const next = queue.next();
            if (next.done) return;
            tries++;
            const res = await fetch(`${gateway.origin}/v1/models`, {
              headers: { "x-api-key": next.value },
            });
            const text = await res.text();
            if (res.status === 200) found ??= next.value;
            else if (/too many failed attempts/.test(text)) throttled++;
          }
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        assert.equal(found, undefined, `guessed after ${tries} tries`);
        assert.ok(throttled > 0, `${tries} tries, none refused unchecked`);
      }, { env });
    }),
});
