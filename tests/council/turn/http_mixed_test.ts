/**
 * A mixed council — one fake CLI process and one HTTP child on a local Anthropic stub — through
 * the whole engine (real runner, real processes, real HTTP), and through the real server with
 * the Anthropic SDK.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { createAgentRunner } from "../../../src/agents/run.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { startServer } from "../../../src/server/wiring.ts";
import { fakeAgent, readFakeLog } from "../../fixtures/fakes.ts";
import {
  anthropicFrames,
  gatedResponse,
  httpAgent,
  jsonResponse,
  type SeenRequest,
  sseResponse,
  startStub,
} from "../../support/model_api_stub.ts";
import { eventually, within } from "../../support/wait.ts";
import { collect, testRequest, TurnWatcher, withAgents } from "../../support/scripted_agents.ts";

/** Only the synthesizer's prompt on an answer turn shows candidates. */
const SYNTH = "=== Candidate A ===";

/** The request's whole body as text (the prompt arrives as structured messages). */
function promptOf(request: SeenRequest): string {
  return JSON.stringify(request.body);
}

/** A stub that drafts as a child and synthesizes when shown candidates. */
function councilStub() {
  return startStub((request) =>
    sseResponse(
      promptOf(request).includes(SYNTH)
        ? anthropicFrames(["Both ", "agree: ", "42."], { input: 300, output: 6 })
        : anthropicFrames(["http draft: 42"], { input: 100, output: 5 }),
    )
  );
}

function runner() {
  return createAgentRunner({
    passApiKeys: false,
    selfOrigins: () => [],
    pricing: {},
    baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ANTHROPIC_API_KEY: "sk-ant-test" },
    killGraceMs: 300,
    sleep: () => Promise.resolve(),
  });
}

async function tempLog(): Promise<{ path: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir();
  return {
    path: `${dir}/fakes.log`,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

Deno.test("mixed council: an HTTP synthesizer and a CLI child answer through the whole engine", async () => {
  await using stub = councilStub();
  await using log = await tempLog();
  const agents = [
    httpAgent("anthropic", stub.origin, { name: "api", model: "claude-sonnet-4-5" }),
    fakeAgent("claude", { reply: "cli draft: 42", log: log.path }, { name: "cli" }),
  ];
  const council = createCouncil({ config: withAgents(agents), runAgent: runner() });
  const turn = await collect(
    council.runTurn(testRequest({ ask: "What is 6 times 7?" }), new AbortController().signal),
  );
  assert.deepEqual(turn.outcome, { kind: "answer", text: "Both agree: 42." });
  assert.equal(
    turn.deltas.join(""),
    "Both agree: 42.",
    "the HTTP synthesizer's text is the answer",
  );
  assert.equal(turn.failed, false);
  assert.equal(stub.requests.length, 2, "the HTTP agent drafted, then synthesized");
  const synthPrompt = promptOf(stub.requests[1]);
  assert.match(synthPrompt, /http draft: 42/);
  assert.match(synthPrompt, /cli draft: 42/);
  assert.equal((await readFakeLog(log.path)).length, 1, "the CLI ran once, as a child");
  assert.equal(turn.usage.calls, 3);
  assert.ok(turn.usage.inputTokens >= 400, "the API's reported input tokens are counted");
  assert.ok(turn.usage.usd > 0, "priced from the table");
  assert.ok(turn.progress.some((line) => /\bapi\b/.test(line) && /\bcli\b/.test(line)));
});

Deno.test("lone HTTP child: each token reaches the host's answer while the upstream is still sending", async () => {
  const frames = anthropicFrames(["Hel", "lo"], { input: 10, output: 2 });
  // Everything after the first delta is sent only once that delta has come out of the council.
  const gated = gatedResponse(frames.slice(0, 4), frames.slice(4));
  await using stub = startStub(() => gated.response);
  const agents = [httpAgent("anthropic", stub.origin, { name: "api" })];
  const council = createCouncil({
    config: withAgents(agents, { fanOutPolicy: "never" }),
    runAgent: runner(),
  });
  const watcher = new TurnWatcher(council.runTurn(testRequest(), new AbortController().signal));
  try {
    await within(
      watcher.until((e) => e.type === "answer_delta" && e.text === "Hel"),
      "the first token before the upstream ends",
      5_000,
    );
  } finally {
    gated.release();
  }
  const turn = await within(watcher.finished, "the turn to end");
  assert.deepEqual(turn.deltas, ["Hel", "lo"]);
  assert.deepEqual(turn.outcome, { kind: "answer", text: "Hello" });
});

Deno.test("mixed council: an HTTP child's upstream failure shows in progress; the CLI carries the turn", async () => {
  await using stub = startStub(() =>
    jsonResponse(400, {
      type: "error",
      error: { type: "invalid_request_error", message: "model: unknown model" },
    })
  );
  await using log = await tempLog();
  const agents = [
    fakeAgent("claude", {
      reply: "cli draft",
      rules: [{ match: SYNTH, reply: "CLI synthesis" }],
      log: log.path,
    }, { name: "cli" }),
    httpAgent("anthropic", stub.origin, { name: "api", model: "claude-nope" }),
  ];
  const council = createCouncil({ config: withAgents(agents), runAgent: runner() });
  const turn = await collect(council.runTurn(testRequest(), new AbortController().signal));
  assert.equal(turn.outcome.kind, "answer");
  assert.equal(turn.failed, false);
  assert.notEqual((turn.outcome as { text: string }).text, "");
  assert.ok(
    turn.progress.some((line) =>
      line.includes("api") && line.includes("HTTP 400") &&
      line.includes("invalid_request_error: model: unknown model")
    ),
    turn.progress.join("\n"),
  );
});

Deno.test("mixed council: background pinning sends a claude model to the anthropic agent", async () => {
  await using stub = councilStub();
  await using log = await tempLog();
  const agents = [
    fakeAgent("codex", { reply: "codex", log: log.path }, { name: "codex" }),
    httpAgent("anthropic", stub.origin, { name: "api", model: "claude-opus-4-8" }),
  ];
  const council = createCouncil({ config: withAgents(agents), runAgent: runner() });
  const turn = await collect(
    council.runTurn(
      testRequest({ model: "claude-haiku-4-5-20251001", ask: "Write a title" }),
      new AbortController().signal,
    ),
  );
  assert.equal(turn.outcome.kind, "answer");
  assert.equal(stub.requests.length, 1);
  assert.equal((stub.requests[0].body as { model: string }).model, "claude-haiku-4-5-20251001");
  assert.equal((await readFakeLog(log.path)).length, 0, "the codex CLI was not asked");
});

Deno.test("mixed council: cancelling the turn aborts the HTTP request and kills the CLI child", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["thinking…"], { input: 1, output: 1 }).slice(0, 4), {
      hang: true,
    })
  );
  await using log = await tempLog();
  const agents = [
    httpAgent("anthropic", stub.origin, { name: "api" }),
    fakeAgent("claude", { modes: ["hang"], log: log.path }, { name: "cli" }),
  ];
  const council = createCouncil({ config: withAgents(agents), runAgent: runner() });
  const controller = new AbortController();
  const watcher = new TurnWatcher(council.runTurn(testRequest(), controller.signal));
  await eventually(
    async () => stub.requests.length > 0 && (await readFakeLog(log.path)).length > 0,
    "both children to start",
  );
  controller.abort();
  await within(stub.clientGone, "the stub to see the client go");
  const turn = await within(watcher.finished, "the turn to end");
  assert.equal(turn.outcome.kind, "answer");
  const [cli] = await readFakeLog(log.path);
  let alive = true;
  try {
    Deno.kill(cli.pid, "SIGCONT");
  } catch {
    alive = false;
  }
  assert.equal(alive, false, "the CLI child was killed");
});

Deno.test("mixed council through the real server: Anthropic SDK stream and create", async () => {
  // startServer's runner reads keys from the gateway's own environment.
  Deno.env.set("COUNCIL_TEST_HTTP_CHILD_KEY", "sk-ant-from-env");
  await using stub = councilStub();
  await using log = await tempLog();
  const agents = [
    httpAgent("anthropic", stub.origin, {
      name: "api",
      apiKeyEnv: "COUNCIL_TEST_HTTP_CHILD_KEY",
    }),
    fakeAgent("codex", { reply: "codex draft: 42", log: log.path }, { name: "cli" }),
  ];
  const config = { ...withAgents(agents), port: 0 };
  const server = startServer(config, { graceMs: 0, abortGraceMs: 3000 });
  try {
    const client = new Anthropic({ baseURL: server.origin, apiKey: "unused", maxRetries: 0 });
    const deltas: string[] = [];
    const stream = client.messages.stream({
      model: "claude-opus-4-8",
      max_tokens: 1000,
      messages: [{ role: "user", content: "What is 6 times 7?" }],
    });
    stream.on("text", (text) => deltas.push(text));
    const final = await stream.finalMessage();
    assert.deepEqual(final.content.map((b) => b.type), ["thinking", "text"]);
    assert.equal((final.content[1] as { text: string }).text, "Both agree: 42.");
    assert.equal(deltas.join(""), "Both agree: 42.");
    assert.equal(stub.requests[0].headers.get("x-api-key"), "sk-ant-from-env");

    const message = await client.messages.create({
      model: "claude-opus-4-8",
      max_tokens: 1000,
      messages: [{ role: "user", content: "And 7 times 6?" }],
    });
    assert.deepEqual(message.content.map((b) => b.type), ["text"]);
    assert.equal((message.content[0] as { text: string }).text, "Both agree: 42.");
    assert.ok(message.usage.input_tokens > 0);
    assert.equal(stub.requests.length, 4, "two turns: a draft and a synthesis each");
    assert.equal((await readFakeLog(log.path)).length, 2);
  } finally {
    await server.shutdown();
    Deno.env.delete("COUNCIL_TEST_HTTP_CHILD_KEY");
  }
});
