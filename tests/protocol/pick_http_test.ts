/**
 * Pick or write over the wire: a fanned-out answer turn whose synthesizer picks a candidate, or
 * writes the answer, streamed and not, on the Messages and Responses protocols.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import { createCouncil } from "../../src/council/turn/turn.ts";
import { byAgent, fakeAgents, testConfig } from "../support/scripted_agents.ts";
import { claudeAsk, codexBody, codexInput } from "../support/host_bodies.ts";
import {
  assertMessagesGrammar,
  assertResponsesGrammar,
  deps,
  post,
  serve,
} from "../support/scripted_turns.ts";
import { parseSse } from "../support/sse_reader.ts";

const CANDIDATES = {
  "claude:child": { text: "ALPHA answer" },
  "codex:child": { text: "BRAVO answer" },
  "gemini:child": { text: "CHARLIE answer" },
};

/** random 0 shows [codex, gemini, claude]: candidate B is gemini's. */
const PICK = { early: ['{"choose"', ': "B"}'], hang: true };
const WRITE = { text: "WRITTEN from all three" };

function councilServer(synth: typeof PICK | typeof WRITE) {
  const fake = fakeAgents(byAgent({ ...CANDIDATES, "claude:synth": synth }));
  const { runTurn } = createCouncil({
    config: testConfig({ heartbeatMs: 1e9, telemetryMs: 1e9 }),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    random: () => 0,
  });
  return serve(deps(runTurn));
}

/** The answer text a Messages reply carries, and everything it carries besides. */
async function messagesAnswer(response: Response, stream: boolean) {
  if (!stream) {
    const body = await response.json();
    return { answer: body.content.map((c: { text: string }) => c.text).join(""), all: body };
  }
  const frames = parseSse(await response.text());
  assertMessagesGrammar(frames);
  const answer = frames.filter((f) => f.data.delta?.type === "text_delta")
    .map((f) => f.data.delta.text).join("");
  return { answer, all: frames.map((f) => f.data) };
}

async function responsesAnswer(response: Response, stream: boolean) {
  if (!stream) {
    const body = await response.json();
    const message = body.output.find((o: { type: string }) => o.type === "message");
    return { answer: message.content[0].text, all: body };
  }
  const frames = parseSse(await response.text());
  assertResponsesGrammar(frames);
  const answer = frames.filter((f) => f.event === "response.output_text.delta")
    .map((f) => f.data.delta).join("");
  return { answer, all: frames.map((f) => f.data) };
}

const PROTOCOLS = [
  {
    name: "messages",
    path: "/v1/messages",
    body: (stream: boolean) => claudeAsk("explain the cache", { tools: [], stream }),
    read: messagesAnswer,
  },
  {
    name: "responses",
    path: "/v1/responses",
    body: (stream: boolean) => codexBody(codexInput("explain the cache"), { stream }),
    read: responsesAnswer,
  },
];

for (const protocol of PROTOCOLS) {
  for (const stream of [true, false]) {
    const how = `${protocol.name} ${stream ? "streamed" : "not streamed"}`;

    Deno.test(`pick http (${how}): a pick is the candidate verbatim, and no other's text`, async () => {
      await using server = councilServer(PICK);
      const response = await post(`${server.url}${protocol.path}`, protocol.body(stream));
      assert.equal(response.status, 200);
      const { answer, all } = await protocol.read(response, stream);
      assert.equal(answer, "CHARLIE answer");
      const wire = JSON.stringify(all);
      assert.ok(!wire.includes("ALPHA answer") && !wire.includes("BRAVO answer"), wire);
      assert.ok(!wire.includes("choose"), "the choice itself never reaches the host");
    });

    Deno.test(`pick http (${how}): a written answer is the synthesizer's own`, async () => {
      await using server = councilServer(WRITE);
      const response = await post(`${server.url}${protocol.path}`, protocol.body(stream));
      assert.equal(response.status, 200);
      const { answer } = await protocol.read(response, stream);
      assert.equal(answer, "WRITTEN from all three");
    });
  }
}
