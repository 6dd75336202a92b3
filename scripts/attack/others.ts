/**
 * Issue 18 points 2 and 4–8, one attack each: kill -9 with children running, concurrent turns
 * of one capped session, control characters for the text log, a child echoing the token, a
 * host claiming /etc as its working directory, and a torn ledger tail.
 */
import { join } from "node:path";
import { messagesBody, streamMessages } from "../bench/client.ts";
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

async function withGateway<T>(
  context: AttackContext,
  config: Record<string, unknown>,
  fn: (gateway: Gateway) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const gateway = await startGateway(context, { fanOutPolicy: "never", ...config }, { env });
  try {
    return await fn(gateway);
  } finally {
    await gateway.stop();
  }
}

const killNine: Attack = {
  id: "kill-9",
  point: 2,
  attack: "kill -9 of the gateway while a child runs",
  expected: "no child runs 5 s later",
  async run(context) {
    const fake = await writeFake(context, "long", `sleep ${context.quick ? 8 : 30}\necho late`);
    const gateway = await startGateway(context, {
      fanOutPolicy: "never",
      defaultAgents: councilOf(fake, 1),
    });
    const turn = streamMessages(gateway.origin, messagesBody("a long turn"));
    for (let i = 0; i < 100 && (await processesMatching(fake)).length === 0; i++) await sleep(100);
    gateway.kill("SIGKILL");
    await gateway.exited;
    await turn;
    await sleep(5000);
    const left = await processesMatching(fake);
    for (const pid of left) {
      try {
        Deno.kill(pid, "SIGKILL"); // our own gateway's orphans
      } catch { /* gone */ }
    }
    return {
      observed: `${left.length} child process(es) still running 5 s after the kill`,
      pass: left.length === 0,
    };
  },
};

const sessionSpend: Attack = {
  id: "session-spend",
  point: 4,
  attack: "20 concurrent turns of one session with maxSessionUsd: 0.02",
  expected: "the session spends at most $0.02 (plus one turn's overshoot)",
  async run(context) {
    const fake = await writeFake(context, "priced", "sleep 0.3\necho priced answer");
    const ledger = join(context.dir, "spend.jsonl");
    return await withGateway(context, {
      maxSessionUsd: 0.02,
      maxConcurrentTurns: 20,
      ledger,
      pricing: { "attack-model": { input: 7, output: 7 } },
      defaultAgents: councilOf(fake, 1),
    }, async (gateway) => {
      const turns = await Promise.all(
        Array.from({ length: 20 }, () => streamMessages(gateway.origin, messagesBody("spend"))),
      );
      await sleep(200);
      const entries = (await Deno.readTextFile(ledger)).split("\n").flatMap((line) => {
        try {
          const entry = JSON.parse(line);
          return typeof entry.sessionUsd === "number" ? [entry] : [];
        } catch {
          return [];
        }
      });
      const spent = entries.reduce((sum, e) => sum + (e.costUsd ?? 0), 0);
      const largest = Math.max(0, ...entries.map((e) => e.costUsd ?? 0));
      const answered = turns.filter((t) => t.answer.includes("priced answer")).length;
      return {
        observed: `spent $${spent.toFixed(4)} over ${answered} answered turns ` +
          `(one turn ≈ $${largest.toFixed(4)})`,
        pass: spent <= 0.02 + largest + 1e-9,
      };
    });
  },
};

/** ESC, BEL and a CR not ending a line: what OSC sequences and line overwrites are made of. */
function rawControls(text: string): number {
  const codes = [...text.replaceAll("\r\n", "\n")].map((ch) => ch.charCodeAt(0));
  return codes.filter((code) => code === 0x1b || code === 0x07 || code === 0x0d).length;
}

const logEscapes: Attack = {
  id: "log-escape",
  point: 5,
  attack: "ESC, BEL and CR in a request path (%1B, %07, %0D) and in `model`",
  expected: "the text log shows them escaped; no raw control character is written",
  async run(context) {
    const fake = await writeFake(context, "answer", "echo ok");
    return await withGateway(context, { defaultAgents: councilOf(fake, 1) }, async (gateway) => {
      for (const path of ["/v1/%1B]0;pwned%07", "/v1/models%0D%1B[2Kfake", "/%1B]52;c;eA==%07"]) {
        await (await fetch(gateway.origin + path)).body?.cancel();
      }
      const body = { ...messagesBody("hi", false), model: "svc\x1b]0;title\x07\rover" };
      await (await fetch(`${gateway.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      })).body?.cancel();
      await sleep(200);
      const raw = rawControls(await gateway.log());
      return {
        observed: `${raw} raw control character(s) in the text log`,
        pass: raw === 0,
      };
    });
  },
};

const secretEcho: Attack = {
  id: "secret-echo",
  point: 6,
  attack: "a child echoing the gateway's token on stderr, then failing",
  expected: "the token appears in no progress line and not in the all-failed answer",
  async run(context) {
    const token = `atk-${crypto.randomUUID()}`;
    const fake = await writeFake(context, "leaky", `printf 'leaked %s\\n' '${token}' >&2\nexit 1`);
    return await withGateway(context, { defaultAgents: councilOf(fake, 1) }, async (gateway) => {
      const res = await fetch(`${gateway.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": token },
        body: JSON.stringify(messagesBody("hi")),
      });
      const text = await res.text();
      return {
        observed: text.includes(token)
          ? `the token is in the reply stream (HTTP ${res.status})`
          : `not in the reply stream (HTTP ${res.status}, ${text.length} bytes)`,
        pass: res.status === 200 && !text.includes(token),
      };
    }, { SVC_GATEWAY_TOKEN: token });
  },
};

const cwdEtc: Attack = {
  id: "cwd-etc",
  point: 7,
  attack: "a host claiming /etc as its working directory",
  expected: "the child works in a temporary directory, not /etc",
  async run(context) {
    const fake = await writeFake(context, "where", "pwd");
    return await withGateway(context, { defaultAgents: councilOf(fake, 1) }, async (gateway) => {
      const body = messagesBody("where are you?");
      body.system = "You help.\n<env>\n - Primary working directory: /etc\n</env>";
      const turn = await streamMessages(gateway.origin, body);
      const cwd = turn.answer.trim().split("\n").pop() ?? "";
      return {
        observed: turn.error ? `turn failed: ${turn.error}` : `the child ran in ${cwd}`,
        pass: !turn.error && cwd !== "" && !cwd.startsWith("/etc"),
      };
    });
  },
};

const tornLedger: Attack = {
  id: "torn-ledger",
  point: 8,
  attack: "a ledger whose last line was torn by a crash, then one more turn",
  expected: "the new entry is a line of its own, intact",
  async run(context) {
    const fake = await writeFake(context, "answer", "echo ok");
    const ledger = join(context.dir, "torn.jsonl");
    await Deno.writeTextFile(ledger, '{"torn":');
    return await withGateway(context, { ledger, defaultAgents: councilOf(fake, 1) }, async (g) => {
      const turn = await streamMessages(g.origin, messagesBody("after the crash"));
      await sleep(200);
      const lines = (await Deno.readTextFile(ledger)).split("\n").filter(Boolean);
      const intact = lines.filter((line) => {
        try {
          return typeof JSON.parse(line).sessionUsd === "number";
        } catch {
          return false;
        }
      }).length;
      return {
        observed: `turn ${turn.error ? "failed" : "answered"}; ${intact} intact turn entr` +
          `${intact === 1 ? "y" : "ies"} after the torn line`,
        pass: !turn.error && intact >= 1,
      };
    });
  },
};

export const OTHER_ATTACKS: readonly Attack[] = [
  killNine,
  sessionSpend,
  logEscapes,
  secretEcho,
  cwdEtc,
  tornLedger,
];
