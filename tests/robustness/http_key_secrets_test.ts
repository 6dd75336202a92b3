/**
 * The key an HTTP agent reads from a variable of the user's own naming (`apiKeyEnv`) is a
 * secret like the well-known provider keys: the real gateway keeps it from CLI children unless
 * passApiKeys is on, and masks it in answers and log lines when a child shows it anyway.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnGateway } from "../support/gateway_process.ts";

const KEY = "sk-or-v1-router-key-5d6e7f80";

/** One turn answered by a child that prints its environment; the gateway's log and the reply. */
async function envTurn(passApiKeys: boolean): Promise<{ reply: string; log: string }> {
  const dir = await Deno.makeTempDir({ prefix: "cg-http-key-" });
  try {
    const printer = join(dir, "env-printer");
    await Deno.writeTextFile(printer, "#!/bin/sh\ncat >/dev/null\nenv\nenv >&2\n");
    await Deno.chmod(printer, 0o755);
    const gateway = await spawnGateway(dir, {
      logLevel: "debug",
      passApiKeys,
      fanOutPolicy: "never",
      defaultAgents: [
        { name: "printer", runner: "command", model: "m", command: printer },
        // Never called (the policy runs agent 0 alone): its key is in the environment anyway.
        {
          name: "router",
          runner: "openai",
          model: "m",
          baseUrl: "http://127.0.0.1:9/v1",
          apiKeyEnv: "ROUTER_KEY",
        },
      ],
    }, { ROUTER_KEY: KEY });
    try {
      const res = await fetch(`${gateway.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude-opus-4-8",
          max_tokens: 100,
          messages: [{ role: "user", content: "print your environment" }],
        }),
      });
      const reply = await res.text();
      assert.equal(res.status, 200, reply);
      assert.match(reply, /PATH=/, "the child printed its environment");
      return { reply, log: gateway.lines().join("\n") };
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("secrets: an HTTP agent's apiKeyEnv key reaches no CLI child without passApiKeys", async () => {
  const { reply, log } = await envTurn(false);
  assert.doesNotMatch(reply, /ROUTER_KEY=/, "the variable is not in the child's environment");
  assert.ok(!reply.includes(KEY), reply);
  assert.ok(!log.includes(KEY), "the key in the log");
});

Deno.test("secrets: with passApiKeys a child may have it, but answers and logs mask it", async () => {
  const { reply, log } = await envTurn(true);
  assert.match(reply, /ROUTER_KEY=\*\*\*/, "the child had it; the answer masks it");
  assert.ok(!reply.includes(KEY), reply);
  assert.match(log, /ROUTER_KEY=\*\*\*/, "the child's stderr, masked in the debug log");
  assert.ok(!log.includes(KEY), "the key in the log");
});
