/**
 * Compaction over HTTP with the real council behind the real protocol handlers: each host's
 * compaction request runs exactly one child (agent 0, its own model, no directive) and its
 * summary comes back as the reply, on both protocols, labelled or not.
 */
import assert from "node:assert/strict";
import { EXHAUSTIVENESS_DIRECTIVE } from "../../src/council/prompt/prompts.ts";
import { createCouncil } from "../../src/council/turn/turn.ts";
import { byAgent, fakeAgents, testConfig } from "../support/scripted_agents.ts";
import { claudeCompaction332, codexCompaction171 } from "../support/compaction_bodies.ts";
import { deps, post, serve } from "../support/scripted_turns.ts";
import { parseSse } from "../support/sse_reader.ts";
import type { HostRequest } from "../support/housekeeping_bodies.ts";

const SUMMARY = "<summary>Renamed the loader; tests pass; docs left.</summary>";

function council() {
  const fake = fakeAgents(byAgent({ "*": { text: SUMMARY } }));
  const config = testConfig({ fanOutPolicy: "always" });
  const { runTurn } = createCouncil({ config, runAgent: fake.runAgent });
  return { fake, config, server: serve(deps(runTurn)) };
}

async function send(url: string, path: string, request: HostRequest) {
  const response = await post(`${url}${path}`, request.body, { headers: request.headers });
  assert.equal(response.status, 200);
  return parseSse(await response.text());
}

function assertOneSynthesizerChild(
  calls: { agent: { name: string }; model?: string; prompt: string }[],
  synthesizer: string,
) {
  assert.equal(calls.length, 1, "exactly one child for the compaction");
  assert.equal(calls[0].agent.name, synthesizer);
  assert.ok(!calls[0].prompt.includes(EXHAUSTIVENESS_DIRECTIVE));
}

Deno.test("compaction http: Claude Code's /compact and auto-compact run one child and return its summary", async () => {
  for (const [trigger, hints] of [["manual", true], ["auto", true], ["auto", false]] as const) {
    const { fake, config, server } = council();
    await using _ = server;
    const events = await send(
      server.url,
      "/v1/messages?beta=true",
      claudeCompaction332(trigger, hints),
    );
    assertOneSynthesizerChild(fake.calls, config.defaultAgents[0].name);
    const text = events.filter((e) => e.data.delta?.type === "text_delta")
      .map((e) => e.data.delta.text).join("");
    assert.ok(text.includes(SUMMARY), `${trigger}/${hints}: ${text}`);
  }
});

Deno.test("compaction http: Codex's compaction runs one child, with and without request_kind", async () => {
  for (const labelled of [true, false]) {
    const { fake, config, server } = council();
    await using _ = server;
    const events = await send(server.url, "/v1/responses", codexCompaction171(labelled));
    assertOneSynthesizerChild(fake.calls, config.defaultAgents[0].name);
    const completed = events.at(-1)!.data;
    assert.equal(completed.type, "response.completed");
    const message = completed.response.output.find((i: { type: string }) => i.type === "message");
    assert.equal(message.content[0].text, SUMMARY);
  }
});
