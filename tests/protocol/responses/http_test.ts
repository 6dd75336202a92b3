import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import type { TurnRequest } from "../../../src/council/types.ts";
import { codexBody, codexInput } from "../../support/host_bodies.ts";
import {
  answer,
  assertResponsesGrammar,
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

const codexAsk = (ask: string, extra: Record<string, unknown> = {}) =>
  codexBody(codexInput(ask), extra);

Deno.test("responses http: a Codex stream — raw frames, grammar, then the connection closes", async () => {
  await using server = serve(deps(fixedTurn([
    progress("consulting a, b"),
    delta("Hi "),
    delta("there"),
    done(answer("Hi there")),
  ])));
  const response = await post(`${server.url}/v1/responses`, codexAsk("say hi"));
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
  const frames = parseSse(await response.text()); // resolves only once the server closed
  for (const frame of frames) assert.match(frame.raw, /^event: \S+\ndata: /);
  assertResponsesGrammar(frames);
  assert.equal(frames.at(-1)?.data.type, "response.completed", "completed is the last event");
  const output = frames.at(-1)!.data.response.output;
  assert.deepEqual(output.map((item: { type: string }) => item.type), ["reasoning", "message"]);
  assert.equal(frames[0].data.response.model, "gpt-5.5");
});

Deno.test("responses http: output_text.delta streams live, before the turn finishes", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  await using reader = new SseReader(await post(`${server.url}/v1/responses`, codexAsk("explain")));
  turn.push(progress("consulting a, b"), delta("First words"));
  const first = await reader.until("response.output_text.delta");
  assert.equal(first.data.delta, "First words");
  assert.equal(turn.returned, false, "the synthesizer is still running");
  turn.push(done(answer("First words")));
  assertResponsesGrammar(await reader.rest());
});

Deno.test("responses http: keep-alive response.in_progress during a silent phase", async () => {
  const clock = new FakeClock();
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn, { clock, keepAliveMs: 3000 }));
  await using reader = new SseReader(await post(`${server.url}/v1/responses`, codexAsk("slow")));
  await reader.until("response.reasoning_summary_text.delta"); // the title; then silence
  clock.advance(6000);
  assert.equal((await reader.next())?.event, "response.in_progress");
  assert.equal((await reader.next())?.event, "response.in_progress");
  turn.push(delta("ok"), done(answer("ok")));
  const frames = await reader.rest();
  assertResponsesGrammar(frames);
  assert.equal(frames.filter((f) => f.event === "response.in_progress").length, 3);
  assert.equal(clock.pending, 0);
});

Deno.test("responses http: a failing turn ends with response.failed (no top-level error)", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  await using reader = new SseReader(await post(`${server.url}/v1/responses`, codexAsk("x")));
  turn.push(progress("agent a failed to start")).throw(new Error("internal /src/x.ts:9"));
  const frames = await reader.rest();
  assertResponsesGrammar(frames);
  const failed = frames.at(-1)!;
  assert.equal(failed.data.type, "response.failed");
  assert.equal(failed.data.response.error.code, "server_error");
  assert.ok(!failed.raw.includes(".ts:"), "no internals leak");
});

Deno.test("responses http: a turn where no agent produced anything is a completed answer with the reason (Codex would retry a failed one)", async () => {
  const reason = "The council could not produce an answer: no agent returned a usable reply.\n" +
    "- claude: executable not found: claude";
  await using server = serve(deps(fixedTurn([
    progress("consulting 1 agent"),
    failedDone(answer(reason)),
  ])));
  const frames = parseSse(await (await post(`${server.url}/v1/responses`, codexAsk("x"))).text());
  assertResponsesGrammar(frames);
  assert.ok(!frames.some((f) => f.data.type === "response.failed"), "never response.failed");
  const completed = frames.at(-1)!;
  assert.equal(completed.data.type, "response.completed");
  assert.equal(completed.data.response.status, "completed");
  assert.equal(completed.data.response.error, null);
  const message = completed.data.response.output.find((i: { type: string }) =>
    i.type === "message"
  );
  assert.equal(message.content[0].text, reason);
  // Codex builds its items from output_item.done: the explanation is one of them.
  assert.ok(
    frames.some((f) =>
      f.data.type === "response.output_item.done" && f.data.item.type === "message" &&
      f.data.item.content[0].text === reason
    ),
  );

  const json = await (await post(
    `${server.url}/v1/responses`,
    codexAsk("x", { stream: false }),
  )).json();
  assert.equal(json.status, "completed");
  assert.equal(json.error, null);
  assert.equal(json.output[0].content[0].text, reason);
});

Deno.test("responses http: a turn that ends without a result is response.failed", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  await using reader = new SseReader(await post(`${server.url}/v1/responses`, codexAsk("x")));
  turn.push(delta("half")).end();
  const frames = await reader.rest();
  assert.equal(frames.at(-1)?.data.type, "response.failed");
});

Deno.test("responses http: a non-streaming reply is one completed response", async () => {
  const seen: TurnRequest[] = [];
  await using server = serve(deps(fixedTurn([progress("p"), done(answer("Hello."))], seen)));
  const response = await post(
    `${server.url}/v1/responses`,
    codexAsk("say hi", { stream: false }),
  );
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.match(body.id, /^resp_/);
  assert.equal(body.object, "response");
  assert.equal(typeof body.created_at, "number");
  assert.equal(body.status, "completed");
  assert.equal(body.model, "gpt-5.5");
  assert.equal(body.error, null);
  assert.equal(body.incomplete_details, null);
  assert.equal(body.output.length, 1);
  assert.match(body.output[0].id, /^msg_/);
  assert.deepEqual({ ...body.output[0], id: undefined }, {
    id: undefined,
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "Hello.", annotations: [] }],
  });
  assert.ok(body.usage.input_tokens > 0);
  assert.equal(body.usage.output_tokens, 42);
  assert.equal(body.usage.total_tokens, body.usage.input_tokens + 42);
  assert.deepEqual(body.usage.input_tokens_details, { cached_tokens: 0 });
  assert.deepEqual(body.usage.output_tokens_details, { reasoning_tokens: 0 });
  assert.deepEqual(seen[0].tools, []);
});

Deno.test("responses http: a valid JSON body that is not a Responses request is a 400", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  const response = await post(`${server.url}/v1/responses`, {
    model: "gpt-5.5",
    input: [{ type: "function_call_output", output: "x" }],
  });
  assert.equal(response.status, 400);
  assert.deepEqual(await response.json(), {
    type: "error",
    error: {
      message: "input.0.call_id: field is required",
      type: "invalid_request_error",
      param: "input.0.call_id",
      code: "missing_required_parameter",
    },
  });
  assert.equal(turn.requests.length, 0);
});

Deno.test("responses http: a handler exception is a 500 envelope without a stack", async () => {
  await using server = serve(deps(() => {
    throw new Error("kaboom /src/secret.ts:1");
  }));
  const response = await post(`${server.url}/v1/responses`, codexAsk("x", { stream: false }));
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.equal(body.error.type, "server_error");
  assert.ok(!JSON.stringify(body).includes("kaboom"));
});

Deno.test("responses http: a client disconnect mid-stream aborts the turn", async () => {
  const turn = new ScriptedTurn();
  await using server = serve(deps(turn.runTurn));
  const controller = new AbortController();
  const response = await post(`${server.url}/v1/responses`, codexAsk("x"), {
    signal: controller.signal,
  });
  await using reader = new SseReader(response);
  await reader.until("response.created");
  await turn.called;
  controller.abort();
  await reader.cancel();
  await turn.finished;
  assert.equal(turn.signals[0].aborted, true);
});

Deno.test("responses http: continuation is detected from a trailing function_call_output", async () => {
  const seen: TurnRequest[] = [];
  await using server = serve(deps(fixedTurn([done(answer("ok"))], seen)));
  const input = [
    ...codexInput("run it"),
    { type: "function_call", id: "fc_1", call_id: "c1", name: "exec_command", arguments: "{}" },
    { type: "function_call_output", id: "fco_1", call_id: "c1", output: "done" },
  ];
  await (await post(`${server.url}/v1/responses`, codexBody(input, { stream: false }))).json();
  assert.equal(seen[0].continuation, true);
});

Deno.test("responses http: our reasoning item sent back is stripped, same session key", async () => {
  const seen: TurnRequest[] = [];
  await using server = serve(
    deps(fixedTurn([progress("consulting a, b"), done(answer("Hi."))], seen)),
  );
  const first = parseSse(await (await post(`${server.url}/v1/responses`, codexAsk("hi"))).text());
  const output = first.at(-1)!.data.response.output;
  const next = { type: "message", role: "user", content: [{ type: "input_text", text: "more" }] };
  await (await post(
    `${server.url}/v1/responses`,
    codexBody([...codexInput("hi"), ...output, next]),
  )).text();
  await (await post(
    `${server.url}/v1/responses`,
    codexBody([...codexInput("hi"), output[1], next]),
  )).text();
  assert.equal(output[0].type, "reasoning");
  assert.deepEqual(seen[1].transcript, seen[2].transcript);
  assert.equal(seen[1].sessionKey, seen[0].sessionKey);
  assert.equal(seen[1].sessionKey, seen[2].sessionKey);
  assert.ok(!JSON.stringify(seen[1].transcript).includes("consulting"));
});

Deno.test("responses http: a Bearer key is forwarded as OPENAI_API_KEY only with passApiKeys", async () => {
  const seen: TurnRequest[] = [];
  const run = fixedTurn([done(answer("ok"))], seen);
  const body = codexAsk("x", { stream: false });
  const headers = { authorization: "Bearer sk-openai" };
  {
    await using server = serve(deps(run, { passApiKeys: true, gatewayToken: "gw" }));
    await (await post(`${server.url}/v1/responses`, body, { headers })).body?.cancel();
    await (await post(`${server.url}/v1/responses`, body, {
      headers: { authorization: "Bearer gw" },
    })).body?.cancel();
  }
  {
    await using server = serve(deps(run));
    await (await post(`${server.url}/v1/responses`, body, { headers })).body?.cancel();
  }
  assert.deepEqual(seen[0].hostCredentials, { OPENAI_API_KEY: "sk-openai" });
  assert.equal(seen[1].hostCredentials, undefined);
  assert.equal(seen[2].hostCredentials, undefined);
});
