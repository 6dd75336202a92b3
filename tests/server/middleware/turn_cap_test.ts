/**
 * maxConcurrentTurns through the real server and council: many concurrent fanned-out turns
 * never run more children at once than the cap allows, queued turns all answer, and a burst
 * past the queue is refused with 429 rather than run.
 */
import assert from "node:assert/strict";
import type { AgentConfig } from "../../../src/config/mod.ts";
import type { AgentResult, RunAgent } from "../../../src/agents/types.ts";
import { configWith, gateway, goodBody } from "../../support/real_server.ts";

const AGENTS = [
  { runner: "command", model: "m", command: "/bin/true", name: "a" },
  { runner: "command", model: "m", command: "/bin/true", name: "b" },
  { runner: "command", model: "m", command: "/bin/true", name: "c" },
] as AgentConfig[];

/** An agent that takes a few ms and counts how many of its calls overlap. */
function countingAgent(): RunAgent & { peak: number } {
  let active = 0;
  const run = async (agent: AgentConfig, _prompt: string, options: { role: string }) => {
    active++;
    run.peak = Math.max(run.peak, active);
    await new Promise((resolve) => setTimeout(resolve, 15));
    active--;
    return {
      agent: agent.name,
      model: agent.model,
      role: options.role,
      ok: true,
      text: `answer from ${agent.name}`,
      exitCode: 0,
      timedOut: false,
      aborted: false,
      durationMs: 15,
      usage: { inputTokens: 1, outputTokens: 1, costUsd: 0, estimated: true },
    } as AgentResult;
  };
  run.peak = 0;
  return run as unknown as RunAgent & { peak: number };
}

async function turns(origin: string, count: number): Promise<number[]> {
  return await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await fetch(`${origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...goodBody("messages", `turn ${i}`), stream: true }),
      });
      const text = await res.text();
      if (res.status === 200) assert.match(text, /message_stop/);
      return res.status;
    }),
  );
}

Deno.test("turn cap: 40 concurrent fanned-out turns run at most maxConcurrentTurns at once", async () => {
  const agent = countingAgent();
  const config = configWith(
    { fanOutPolicy: "always", maxConcurrentTurns: 2, maxQueuedTurns: 100 },
    AGENTS,
  );
  await using server = gateway(config, { runAgent: agent });
  const statuses = await turns(server.origin, 40);
  assert.deepEqual(new Set(statuses), new Set([200]), "queued turns all answer");
  // Two turns at a time, each three children at once (then its synthesizer alone).
  assert.ok(agent.peak <= 2 * 3, `peak ${agent.peak} concurrent agent calls`);
  assert.ok(agent.peak >= 3, `peak ${agent.peak}: the children of a turn still run together`);
});

Deno.test("turn cap: a burst past the queue is refused with 429, the rest answer", async () => {
  const agent = countingAgent();
  const config = configWith(
    { fanOutPolicy: "always", maxConcurrentTurns: 1, maxQueuedTurns: 2 },
    AGENTS,
  );
  await using server = gateway(config, { runAgent: agent });
  const statuses = await turns(server.origin, 12);
  const answered = statuses.filter((s) => s === 200).length;
  const refused = statuses.filter((s) => s === 429).length;
  assert.equal(answered + refused, 12, `${statuses}`);
  assert.ok(answered >= 3 && refused >= 1, `${answered} answered, ${refused} refused`);
  assert.ok(agent.peak <= 3, `peak ${agent.peak}`);
});
