/**
 * Issue 18 points 2 and 4–8, against the real gateway, one attack each: kill -9 with a child
 * running, concurrent turns of one capped session, control characters for the text log, a child
 * echoing the token, a host claiming /etc as its working directory, and a torn ledger tail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { messagesBody, streamMessages } from "../../../scripts/bench/client.ts";
import { spawnGateway } from "../../support/gateway_process.ts";
import {
  councilOf,
  inTempDir,
  post,
  processesMatching,
  sleep,
  withGateway,
  writeFake,
} from "./attack_gateway.ts";

const ignore = Deno.build.os === "windows";

Deno.test({
  name: "attack kill-9: no child runs 5 s after the gateway was killed with SIGKILL mid-turn",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "long", "sleep 8\necho late");
      const gateway = await spawnGateway(dir, {
        host: "127.0.0.1",
        fanOutPolicy: "never",
        defaultAgents: councilOf(fake),
      });
      const turn = streamMessages(gateway.origin, messagesBody("a long turn"));
      for (let i = 0; i < 100 && (await processesMatching(fake)).length === 0; i++) {
        await sleep(100);
      }
      assert.notDeepEqual(await processesMatching(fake), [], "the child started");
      gateway.kill("SIGKILL");
      await gateway.exited;
      await turn;
      let left = await processesMatching(fake);
      for (let i = 0; i < 50 && left.length; i++) {
        await sleep(100);
        left = await processesMatching(fake);
      }
      for (const pid of left) {
        try {
          Deno.kill(pid, "SIGKILL"); // our own gateway's orphans
        } catch { /* gone */ }
      }
      assert.deepEqual(left, [], "children still running after the kill");
    }),
});

/** The ledger's turn entries (lines with a sessionUsd), skipping torn or other lines. */
async function turnEntries(ledger: string): Promise<Record<string, number>[]> {
  return (await Deno.readTextFile(ledger)).split("\n").flatMap((line) => {
    try {
      const entry = JSON.parse(line);
      return typeof entry.sessionUsd === "number" ? [entry] : [];
    } catch {
      return [];
    }
  });
}

Deno.test({
  name: "attack session-spend: 20 concurrent turns of one session with maxSessionUsd 0.02 " +
    "spend at most that plus one turn's overshoot",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "priced", "sleep 0.3\necho priced answer");
      const ledger = join(dir, "spend.jsonl");
      await withGateway(dir, {
        maxSessionUsd: 0.02,
        maxConcurrentTurns: 20,
        ledger,
        pricing: { "attack-model": { input: 7, output: 7 } },
        defaultAgents: councilOf(fake),
      }, async (gateway) => {
        const turns = await Promise.all(
          Array.from({ length: 20 }, () => streamMessages(gateway.origin, messagesBody("spend"))),
        );
        await sleep(200);
        const entries = await turnEntries(ledger);
        const spent = entries.reduce((sum, e) => sum + (e.costUsd ?? 0), 0);
        const largest = Math.max(0, ...entries.map((e) => e.costUsd ?? 0));
        assert.ok(turns.some((t) => t.answer.includes("priced answer")), "some turns answered");
        assert.ok(largest > 0, "turns are priced");
        assert.ok(spent <= 0.02 + largest + 1e-9, `spent $${spent} (one turn $${largest})`);
      });
    }),
});

Deno.test({
  name: "attack log-escape: ESC, BEL and CR in a request path and in `model` reach the text " +
    "log escaped, never raw",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "answer", "echo ok");
      const lines = await withGateway(dir, { defaultAgents: councilOf(fake) }, async (gateway) => {
        for (const path of ["/v1/%1B]0;pwned%07", "/v1/models%0D%1B[2Kfake", "/%1B]52;c;eA==%07"]) {
          await (await fetch(gateway.origin + path)).body?.cancel();
        }
        const body = { ...messagesBody("hi", false), model: "svc\x1b]0;title\x07\rover" };
        await (await post(gateway.origin, "/v1/messages", body)).body?.cancel();
        await gateway.stop();
        return gateway.lines();
      });
      const log = lines.join("\n");
      assert.match(log, /pwned/, "the requests were logged");
      const raw = [...log].filter((ch) => ["\x1b", "\x07", "\r"].includes(ch));
      assert.equal(raw.length, 0, "raw control characters in the text log");
    }),
});

Deno.test({
  name: "attack secret-echo: a child echoing the gateway's token on stderr, then failing, " +
    "does not put it in the reply stream",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const token = `atk-${crypto.randomUUID()}`;
      const fake = await writeFake(dir, "leaky", `printf 'leaked %s\\n' '${token}' >&2\nexit 1`);
      const config = { defaultAgents: councilOf(fake) };
      await withGateway(dir, config, async (gateway) => {
        const res = await post(gateway.origin, "/v1/messages", messagesBody("hi"), {
          "x-api-key": token,
        });
        const text = await res.text();
        assert.equal(res.status, 200);
        assert.ok(!text.includes(token), "the token is in the reply stream");
      }, { env: { SVC_GATEWAY_TOKEN: token } });
    }),
});

Deno.test({
  name: "attack cwd-etc: a host claiming /etc as its working directory; the child works " +
    "elsewhere",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "where", "pwd");
      await withGateway(dir, { defaultAgents: councilOf(fake) }, async (gateway) => {
        const body = messagesBody("where are you?");
        body.system = "You help.\n<env>\n - Primary working directory: /etc\n</env>";
        const turn = await streamMessages(gateway.origin, body);
        assert.equal(turn.error, undefined);
        const cwd = turn.answer.trim().split("\n").pop() ?? "";
        assert.ok(cwd !== "" && !cwd.startsWith("/etc"), `the child ran in ${cwd}`);
      });
    }),
});

Deno.test({
  name: "attack torn-ledger: after a ledger line torn by a crash, the next turn's entry is a " +
    "line of its own, intact",
  ignore,
  fn: () =>
    inTempDir(async (dir) => {
      const fake = await writeFake(dir, "answer", "echo ok");
      const ledger = join(dir, "torn.jsonl");
      await Deno.writeTextFile(ledger, '{"torn":');
      await withGateway(dir, { ledger, defaultAgents: councilOf(fake) }, async (gateway) => {
        const turn = await streamMessages(gateway.origin, messagesBody("after the crash"));
        assert.equal(turn.error, undefined);
        await sleep(200);
        assert.equal((await turnEntries(ledger)).length, 1);
      });
    }),
});
