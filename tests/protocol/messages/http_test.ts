import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { claudeAsk } from "../../support/host_bodies.ts";
import {
  answer,
  assertMessagesGrammar,
  delta,
  deps,
  done,
  failedDone,
  fixedTurn,
  post,
  progress,
  ScriptedTurn,
  serve,
} from "../../support/scripted_turns.ts";
import { parseSse, SseReader } from "../../support/sse_reader.ts";
import type { TurnRequest } from "../../../src/council/types.ts";

Deno.test("messages http: every raw frame has an event line and the grammar holds", async () => {
  await using server = serve(deps(fixedTurn([
    progress("consulting a, b"),
    delta("Hi "),
    delta("there"),
    done(answer("Hi there")),
  ])));
  const response = await post(`${server.url}/v1/messages`, claudeAsk("say hi"));
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
  const text = await response.text();
  const frames = parseSse(text);
  for (const frame of frames) assert.match(frame.raw, /^event: \S+\ndata: /, frame.raw);
  assertMessagesGrammar(frames);
  assert.deepEqual(frames.map((f) => f.event), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  assert.equal(frames[0].data.message.model, "claude-opus-4-8", "the requested model is echoed");
});

Deno.test("messages http: the answer block opens and streams before the turn finishes", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  await using reader = new SseReader(await post(`${server.url}/v1/messages`, claudeAsk("explain")));
  turn.push(progress("consulting a, b"), delta("First words"));
  const opened = await reader.until("content_block_delta");
  assert.equal(opened.data.delta.type, "thinking_delta");
  const text = await reader.until("content_block_start");
  assert.equal(text.data.content_block.type, "text");
  const first = await reader.until("content_block_delta");
  assert.equal(first.data.delta.text, "First words");
  assert.equal(turn.returned, false, "the synthesizer is still running");
  turn.push(delta(", more."), done(answer("First words, more.")));
  const frames = await reader.rest();
  assertMessagesGrammar(frames);
  assert.equal(frames.at(-1)?.event, "message_stop");
});

Deno.test("messages http: pings keep a silent stream alive", async () => {
  const clock = new FakeClock();
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn, { clock, keepAliveMs: 3000 }));
  await using reader = new SseReader(
    await post(`${server.url}/v1/messages?beta=true`, claudeAsk("slow")),
  );
  await reader.until("content_block_start"); // the progress block is open; the council is silent
  clock.advance(3000);
  clock.advance(3000);
  assert.equal((await reader.next())?.event, "ping");
  assert.deepEqual((await reader.next())?.data, { type: "ping" });
  turn.push(delta("ok"));
  await reader.until("content_block_start");
  await reader.until("content_block_delta");
  clock.advance(3000); // also while the answer streams
  assert.equal((await reader.next())?.event, "ping");
  turn.push(done(answer("ok")));
  const frames = await reader.rest();
  assertMessagesGrammar(frames);
  assert.equal(frames.filter((f) => f.event === "ping").length, 3);
  assert.equal(clock.pending, 0, "keep-alive timer cleared at the end");
});

Deno.test("messages http: ?beta=true routes and a non-streaming body gets one JSON message", async () => {
  const seen: TurnRequest[] = [];
  await using server = serve(deps(fixedTurn([progress("p"), done(answer("Hello."))], seen)));
  const response = await post(
    `${server.url}/v1/messages?beta=true`,
    claudeAsk("say hi", { stream: undefined }),
  );
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.match(body.id, /^msg_/);
  assert.deepEqual({ ...body, id: undefined, usage: undefined }, {
    id: undefined,
    type: "message",
    role: "assistant",
    model: "claude-opus-4-8",
    content: [{ type: "text", text: "Hello." }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: undefined,
  });
  assert.ok(body.usage.input_tokens > 0);
  assert.equal(body.usage.output_tokens, 42);
  assert.equal(seen[0].ask, "say hi");
});

Deno.test("messages http: a non-streaming tool turn is one tool_use block", async () => {
  await using server = serve(deps(fixedTurn([
    done({ kind: "tool", name: "Bash", input: { command: "ls -la" } }),
  ])));
  const body = await (await post(`${server.url}/v1/messages`, claudeAsk("list", { stream: false })))
    .json();
  assert.equal(body.stop_reason, "tool_use");
  assert.equal(body.content.length, 1);
  assert.equal(body.content[0].type, "tool_use");
  assert.match(body.content[0].id, /^toolu_/);
  assert.equal(body.content[0].name, "Bash");
  assert.deepEqual(body.content[0].input, { command: "ls -la" });
});

Deno.test("messages http: usage is estimated when the council reports no output tokens", async () => {
  const usage = { inputTokens: 0, outputTokens: 0, usd: 0, calls: 1, wallMs: 1 };
  await using server = serve(deps(fixedTurn([done(answer("x".repeat(40)), usage)])));
  const body = await (await post(`${server.url}/v1/messages`, {
    model: "m",
    messages: [{ role: "user", content: "a".repeat(10) }],
  })).json();
  assert.deepEqual(body.usage, {
    input_tokens: 3,
    output_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  });
});

Deno.test("messages http: a valid JSON body that is not a Messages request is a 400 naming the field", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  const response = await post(`${server.url}/v1/messages`, {
    model: "m",
    messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }],
  });
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.equal(body.type, "error");
  assert.equal(body.error.type, "invalid_request_error");
  assert.match(body.error.message, /messages\.0\.content\.0\.tool_use_id/);
  assert.equal(turn.requests.length, 0, "no turn ran");
});

Deno.test("messages http: a failure after the stream started ends with an error event, no stack", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  await using reader = new SseReader(await post(`${server.url}/v1/messages`, claudeAsk("x")));
  await reader.until("content_block_start");
  turn.push(progress("working")).throw(new Error("secret internals at /src/x.ts:1"));
  const frames = await reader.rest();
  const last = frames.at(-1)!;
  assert.equal(last.event, "error");
  assert.equal(last.data.type, "error");
  assert.equal(last.data.error.type, "api_error");
  assert.ok(!last.raw.includes("secret internals") && !last.raw.includes(".ts:"), last.raw);
  assertMessagesGrammar(frames);
});

Deno.test("messages http: a turn that ends without a result is reported as an error event", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  await using reader = new SseReader(await post(`${server.url}/v1/messages`, claudeAsk("x")));
  turn.push(delta("partial")).end();
  const frames = await reader.rest();
  assert.equal(frames.at(-1)?.event, "error");
  assert.ok(!frames.some((f) => f.event === "message_stop"));
});

Deno.test("messages http: a handler exception is a 500 envelope without a stack", async () => {
  await using server = serve(deps(() => {
    throw new Error("kaboom at /src/secret.ts:10");
  }));
  const response = await post(`${server.url}/v1/messages`, claudeAsk("x", { stream: false }));
  assert.equal(response.status, 500);
  const text = await response.text();
  assert.ok(!text.includes("kaboom") && !text.includes(".ts:"), text);
  assert.equal(JSON.parse(text).type, "error");
});

Deno.test("messages http: a client disconnect mid-stream aborts the turn", async () => {
  const turn = new ScriptedTurn();
  const clock = new FakeClock();
  await using server = serve(deps(turn.runTurn, { clock }));
  const controller = new AbortController();
  const response = await post(`${server.url}/v1/messages`, claudeAsk("x"), {
    signal: controller.signal,
  });
  await using reader = new SseReader(response);
  await reader.until("message_start");
  await turn.called;
  controller.abort();
  await reader.cancel();
  await turn.finished; // the generator saw the abort
  assert.equal(turn.signals[0].aborted, true);
  assert.equal(clock.pending, 0, "no keep-alive timer left behind");
});

Deno.test("messages http: a client disconnect during a JSON reply aborts the turn", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  const controller = new AbortController();
  // A small body: Deno 2.9 notices a silent disconnect only then (larger bodies: at the next write).
  const small = { model: "m", messages: [{ role: "user", content: "x" }] };
  const pending = post(`${server.url}/v1/messages`, small, { signal: controller.signal });
  await turn.called;
  controller.abort();
  await assert.rejects(pending);
  await turn.finished;
  assert.equal(turn.signals[0].aborted, true);
});

Deno.test("messages http: host credentials are forwarded only with passApiKeys, never the gateway token", async () => {
  const seen: TurnRequest[] = [];
  const run = fixedTurn([done(answer("ok"))], seen);
  const body = claudeAsk("x", { stream: false });
  {
    await using server = serve(deps(run, { passApiKeys: true, gatewayToken: "gw-secret" }));
    await (await post(`${server.url}/v1/messages`, body, {
      headers: { "x-api-key": "sk-ant-key", authorization: "Bearer oauth-token" },
    })).body?.cancel();
    await (await post(`${server.url}/v1/messages`, body, {
      headers: { "x-api-key": "gw-secret", authorization: "Bearer gw-secret" },
    })).body?.cancel();
  }
  {
    await using server = serve(deps(run, { passApiKeys: false }));
    await (await post(`${server.url}/v1/messages`, body, {
      headers: { "x-api-key": "sk-ant-key" },
    })).body?.cancel();
  }
  assert.deepEqual(seen[0].hostCredentials, {
    ANTHROPIC_API_KEY: "sk-ant-key",
    ANTHROPIC_AUTH_TOKEN: "oauth-token",
  });
  assert.equal(seen[1].hostCredentials, undefined, "the gateway's own token is not a credential");
  assert.equal(seen[2].hostCredentials, undefined, "passApiKeys off");
});

Deno.test("messages http: a turn where no agent produced anything is a normal answer", async () => {
  const reason = "The council could not produce an answer: no agent returned a usable reply.";
  await using server = serve(deps(fixedTurn([progress("p"), failedDone(answer(reason))])));
  const frames = parseSse(await (await post(`${server.url}/v1/messages`, claudeAsk("x"))).text());
  assertMessagesGrammar(frames);
  const text = frames.filter((f) => f.data.delta?.type === "text_delta")
    .map((f) => f.data.delta.text).join("");
  assert.equal(text, reason);
  assert.equal(frames.find((f) => f.event === "message_delta")?.data.delta.stop_reason, "end_turn");
});
