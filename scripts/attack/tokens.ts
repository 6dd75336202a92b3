/**
 * Issue 18 point 9: tokens worth the name. A short token on a non-loopback bind, and guessing
 * a short token over loopback.
 */
import { councilOf, sleep, spawnGateway, startGateway, writeFake } from "./gateway.ts";
import type { Attack } from "./table.ts";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** The 2-character token of the report. */
const SHORT_TOKEN = "q7";

const shortToken: Attack = {
  id: "short-token",
  point: 9,
  attack: "`serve` on 0.0.0.0 with a 2-character token",
  expected: "refused at start: a config error, exit 2, nothing bound",
  async run(context) {
    const { child, logPath } = await spawnGateway(context, { host: "0.0.0.0" }, {
      env: { SVC_GATEWAY_TOKEN: SHORT_TOKEN },
    });
    const exited = child.status.then((s) => s.code);
    let listened = false;
    const deadline = Date.now() + 30_000;
    let code: number | undefined;
    while (code === undefined && Date.now() < deadline) {
      if (/listening on/.test(await Deno.readTextFile(logPath).catch(() => ""))) {
        listened = true; // this build binds every interface: stop it at once
        child.kill("SIGKILL");
      }
      code = await Promise.race([exited, sleep(50).then(() => undefined)]);
    }
    const log = await Deno.readTextFile(logPath).catch(() => "");
    const reason = /config: host: .*$/m.exec(log)?.[0] ?? "";
    return {
      observed: listened
        ? "started and listened on every interface"
        : `exit ${code}: ${reason.slice(0, 120)}`,
      pass: !listened && code === 2,
    };
  },
};

/** Every 2-character token over ALPHABET, in order. */
function* candidates(): Generator<string> {
  for (const a of ALPHABET) for (const b of ALPHABET) yield a + b;
}

const tokenGuess: Attack = {
  id: "token-guess",
  point: 9,
  attack: "guessing a 2-character token over loopback, 8 requests at a time, for 20 s (3 s in " +
    "quick)",
  expected: "not guessed: after 10 failures in a minute the address gets 401 without its " +
    "token being checked, for a minute",
  async run(context) {
    const fake = await writeFake(context, "answer", "echo ok");
    const gateway = await startGateway(context, { defaultAgents: councilOf(fake, 1) }, {
      env: { SVC_GATEWAY_TOKEN: SHORT_TOKEN },
    });
    try {
      const started = performance.now();
      const forMs = context.quick ? 3000 : 20_000;
      const queue = candidates();
      let tries = 0;
      let throttled = 0;
      let found: { token: string; ms: number } | undefined;
      const worker = async () => {
        while (!found && performance.now() - started < forMs) {
          const next = queue.next();
          if (next.done) return;
          tries++;
          const res = await fetch(`${gateway.origin}/v1/models`, {
            headers: { "x-api-key": next.value },
          });
          const text = await res.text();
          if (res.status === 200) found ??= { token: next.value, ms: performance.now() - started };
          else if (/too many failed attempts/.test(text)) throttled++;
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      const s = ((performance.now() - started) / 1000).toFixed(1);
      return {
        observed: found
          ? `guessed ("${found.token}") in ${(found.ms / 1000).toFixed(2)} s after ${tries} tries`
          : `not guessed in ${s} s: ${tries} tries, ${throttled} refused unchecked`,
        pass: !found,
      };
    } finally {
      await gateway.stop();
    }
  },
};

export const TOKEN_ATTACKS: readonly Attack[] = [shortToken, tokenGuess];
