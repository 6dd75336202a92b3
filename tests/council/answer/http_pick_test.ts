/**
 * Pick or write with HTTP members (Anthropic Messages and OpenAI Chat Completions streams from a
 * local stub, through the real runner): a streamed pick ends the synthesizer's stream at once and
 * sends the candidate; a written answer streams as before.
 */
import assert from "node:assert/strict";
import { createAgentRunner } from "../../../src/agents/run.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import {
  anthropicFrames,
  gatedResponse,
  httpAgent,
  isSynthesis,
  openaiFrames,
  sseResponse,
  startStub,
} from "../../support/model_api_stub.ts";
import { within } from "../../support/wait.ts";
import { collect, testRequest, TurnWatcher, withAgents } from "../../support/scripted_agents.ts";

function runner() {
  return createAgentRunner({
    passApiKeys: false,
    selfOrigins: () => [],
    pricing: {},
    baseEnv: { PATH: "/usr/bin:/bin", ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: "sk-test" },
    killGraceMs: 300,
    sleep: () => Promise.resolve(),
  });
}

/** The synthesizer's stream: these texts, then nothing more until the request is dropped. */
function council(synthTexts: string[], hang: boolean) {
  const released: (() => void)[] = [];
  const anthropic = startStub((request) => {
    if (!isSynthesis(request)) {
      return sseResponse(anthropicFrames(["anthropic draft: 42"], { input: 100, output: 5 }));
    }
    const frames = anthropicFrames(synthTexts, { input: 300, output: 6 });
    if (!hang) return sseResponse(frames);
    // Everything up to its texts; the end of the message never comes on its own.
    const gated = gatedResponse(frames.slice(0, 3 + synthTexts.length), frames.slice(-3));
    released.push(gated.release);
    return gated.response;
  });
  const openai = startStub(() =>
    sseResponse(openaiFrames(["openai draft: 6 × 7 = 42"], { input: 100, output: 5 }))
  );
  const agents = [
    httpAgent("anthropic", anthropic.origin, { name: "claude-api" }),
    httpAgent("openai", openai.origin, { name: "gpt-api" }),
  ];
  const { runTurn } = createCouncil({
    config: withAgents(agents),
    runAgent: runner(),
    random: () => 0.999, // candidates in child order: A is claude-api's, B gpt-api's
  });
  return {
    runTurn,
    release: () => released.splice(0).forEach((release) => release()),
    async [Symbol.asyncDispose]() {
      released.forEach((release) => release());
      await anthropic[Symbol.asyncDispose]();
      await openai[Symbol.asyncDispose]();
    },
  };
}

Deno.test("http pick: a streamed pick ends the synthesizer's stream at once and sends the candidate", async () => {
  await using c = council(['{"choose"', ': "B"}'], true);
  const turn = await within(
    collect(c.runTurn(testRequest({ ask: "What is 6 times 7?" }), new AbortController().signal)),
    "the turn, though the synthesizer's stream never ends",
    10_000,
  );
  assert.deepEqual(turn.outcome, { kind: "answer", text: "openai draft: 6 × 7 = 42" });
  assert.equal(turn.deltas.join(""), "openai draft: 6 × 7 = 42");
  assert.ok(turn.progress.includes("claude-api picked gpt-api's answer"), turn.progress.join("\n"));
});

Deno.test("http pick: a written answer streams live while the synthesizer's stream is open", async () => {
  await using c = council(["Both ", "agree: ", "42."], true);
  const watcher = new TurnWatcher(
    c.runTurn(testRequest({ ask: "What is 6 times 7?" }), new AbortController().signal),
  );
  // The answer's text arrives while the synthesizer's message has not ended (its end is gated).
  await within(watcher.until((e) => e.type === "answer_delta"), "the answer's first text", 10_000);
  c.release();
  const turn = await watcher.finished;
  assert.deepEqual(turn.outcome, { kind: "answer", text: "Both agree: 42." });
  assert.match(turn.progress.at(-1)!, /writing the answer from 2 candidates$/);
});
