/**
 * The recursion guard, end to end (issue 9 §8): a real child (fake-claude in `post` mode) that
 * calls back into the gateway it runs under is refused with the clear 400, and the turn it
 * belongs to still ends cleanly with an answer.
 */
import assert from "node:assert/strict";
import { resetSync } from "@logtape/logtape";
import { createAgentRunner } from "../../src/agents/run.ts";
import type { RunAgent } from "../../src/agents/types.ts";
import { setupLogging } from "../../src/base/log.ts";
import { RECURSION_MESSAGE } from "../../src/server/app.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { configWith, type Gateway, gateway, TOKEN } from "../support/real_server.ts";

Deno.test("recursion: a child calling the gateway gets the 400 and the turn still answers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cg-recursion-" });
  const lines: string[] = [];
  setupLogging({ level: "debug", json: false, secrets: [TOKEN], write: (l) => lines.push(l) });
  try {
    const log = `${dir}/fake.log`;
    const agent = fakeAgent("claude", { modes: ["post"], log }, { name: "claude" });
    const real = createAgentRunner({
      passApiKeys: false,
      selfOrigins: () => server.origins as string[],
      pricing: {},
    });
    // The child learns where the gateway is as a real claude would: ANTHROPIC_BASE_URL. It is set
    // in the agent's own env (which wins over the scrub), under each loopback spelling in turn.
    let call = 0;
    const runAgent: RunAgent = (a, prompt, options) => {
      const host = call++ % 2 === 0 ? "127.0.0.1" : "localhost";
      const base = `http://${host}:${server.port}`;
      return real({ ...a, env: { ...a.env, ANTHROPIC_BASE_URL: base } }, prompt, options);
    };
    const server: Gateway = gateway(
      configWith({ token: TOKEN, fanOutPolicy: "never" }, [agent]),
      { runAgent },
    );
    await using _ = server;

    for (const [i, host] of ["127.0.0.1", "localhost"].entries()) {
      const res = await fetch(`${server.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TOKEN },
        body: JSON.stringify({
          model: "claude-opus-4-8",
          max_tokens: 100,
          messages: [{ role: "user", content: `call yourself (${i})` }],
        }),
      });
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.stop_reason, "end_turn");
      // The child's own report of its call: refused with 400, not 401 (it has no token) or 200.
      assert.equal(body.content[0].text, `POST http://${host}:${server.port}/v1/messages -> 400`);
    }

    const calls = await readFakeLog(log);
    assert.equal(calls.length, 2, "one child per turn, and no nested turn started");
    const refusals = lines.filter((l) => l.includes("refused a request from a council child"));
    assert.equal(refusals.length, 2, lines.join("\n"));
    const turns = lines.filter((l) => l.includes("messages turn:"));
    assert.equal(turns.length, 2, "the refused calls never became turns");
    assert.ok(lines.some((l) => / 400 \d+ms/.test(l) && l.includes("POST /v1/messages")));
  } finally {
    resetSync();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("recursion: the refusal names the cause, in each protocol's envelope", async () => {
  await using server = gateway(configWith({ token: TOKEN }));
  for (const [path, shape] of [["/v1/messages", "anthropic"], ["/v1/responses", "openai"]]) {
    const res = await fetch(`${server.origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-council-depth": "1" },
      body: "{}",
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.message, RECURSION_MESSAGE);
    assert.equal(body.error.type, "invalid_request_error");
    if (shape === "anthropic") assert.equal(body.type, "error");
  }
});
