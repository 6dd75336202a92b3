/**
 * Housekeeping over HTTP with the real council behind the real protocol handlers: each host's
 * title request runs one child (pinned, no directive) while its main request convenes the
 * council; any Codex model id and its request shape work.
 */
import assert from "node:assert/strict";
import { EXHAUSTIVENESS_DIRECTIVE } from "../../src/council/prompt/prompts.ts";
import { createCouncil } from "../../src/council/turn/turn.ts";
import { byAgent, fakeAgents, testConfig } from "../support/scripted_agents.ts";
import { deps, post, serve } from "../support/scripted_turns.ts";
import { parseSse } from "../support/sse_reader.ts";
import {
  claudeMain,
  claudeTitle,
  codexMain,
  codexTitle,
  type HostRequest,
} from "../support/housekeeping_bodies.ts";

function council() {
  const fake = fakeAgents(byAgent({
    "*:child": { text: "A draft." },
    "*:synth": { text: "The council's answer." },
    "*": { text: '{"title":"Importer date handling"}' },
  }));
  const { runTurn } = createCouncil({ config: testConfig(), runAgent: fake.runAgent });
  return { fake, server: serve(deps(runTurn)) };
}

async function send(url: string, path: string, request: HostRequest) {
  const response = await post(`${url}${path}`, request.body, { headers: request.headers });
  assert.equal(response.status, 200);
  return parseSse(await response.text());
}

const PROMPT = "Why does the importer drop rows with an empty date column?";

Deno.test("housekeeping http: Claude Code's title request runs one child; its main request the council", async () => {
  for (const hint of [true, false]) {
    const { fake, server } = council();
    await using _ = server;
    await send(server.url, "/v1/messages?beta=true", claudeTitle(PROMPT, { hint }));
    assert.equal(fake.calls.length, 1, `one child for the title (hint=${hint})`);
    const [title] = fake.calls;
    assert.equal(title.agent.runner, "claude");
    assert.equal(title.model, "claude-opus-5-5", "pinned to the host's model");
    assert.ok(!title.prompt.includes(EXHAUSTIVENESS_DIRECTIVE));

    fake.calls.length = 0;
    await send(server.url, "/v1/messages?beta=true", claudeMain(PROMPT, hint));
    assert.equal(fake.calls.filter((c) => c.role === "child").length, 3, "the council");
  }
});

Deno.test("housekeeping http: Codex's title thread runs one child; its turn on gpt-6-sol the council", async () => {
  const { fake, server } = council();
  await using _ = server;
  const title = await send(server.url, "/v1/responses", codexTitle(PROMPT));
  assert.equal(fake.calls.length, 1);
  assert.equal(fake.calls[0].agent.runner, "codex");
  assert.equal(fake.calls[0].model, "gpt-6-sol");
  assert.equal(title.at(-1)?.data.type, "response.completed");

  fake.calls.length = 0;
  // The default model's shape: no `tools`, an `additional_tools` item, reasoning context.
  const main = await send(server.url, "/v1/responses", codexMain(PROMPT));
  assert.equal(fake.calls.filter((c) => c.role === "child").length, 3);
  const completed = main.at(-1)!.data;
  assert.equal(completed.type, "response.completed");
  assert.equal(completed.response.model, "gpt-6-sol");
  const message = completed.response.output.find((i: { type: string }) => i.type === "message");
  assert.equal(message.content[0].text, "The council's answer.");
});
