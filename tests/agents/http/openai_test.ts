/**
 * The `openai` runner against a local Chat Completions stub (the shape of OpenAI, Ollama, vLLM,
 * llama.cpp and LM Studio): request, deltas, usage, cost, failures, retry and cancellation.
 */
import assert from "node:assert/strict";
import { costOf, findPrice, mergePricing } from "../../../src/agents/cost.ts";
import { cleanBaseEnv, EventLog, testRunner } from "../../support/agent_runner.ts";
import {
  closedPort,
  frame,
  gatedResponse,
  httpAgent,
  jsonResponse,
  openaiFrames,
  sseResponse,
  startStub,
} from "../../support/model_api_stub.ts";
import { within } from "../../support/wait.ts";

function runner(options: Parameters<typeof testRunner>[0] = {}) {
  return testRunner({ baseEnv: cleanBaseEnv({ OPENAI_API_KEY: "sk-openai-test" }), ...options });
}

Deno.test("openai: one streaming POST to {baseUrl}/chat/completions asking for usage, Bearer key", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["ok"], { input: 3, output: 1 })));
  const agent = httpAgent("openai", `${stub.origin}/v1`, {
    model: "qwen2.5-coder:7b",
    maxTokens: 2048,
    headers: { "HTTP-Referer": "https://example.com" },
  });
  const result = await runner()(agent, "What now?", { role: "child" });
  assert.equal(result.ok, true, result.error);
  const [request] = stub.requests;
  assert.equal(request.path, "/v1/chat/completions");
  assert.equal(request.headers.get("authorization"), "Bearer sk-openai-test");
  assert.equal(request.headers.get("http-referer"), "https://example.com");
  assert.equal(request.headers.get("x-council-depth"), "1");
  assert.deepEqual(request.body, {
    model: "qwen2.5-coder:7b",
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: "user", content: "What now?" }],
    max_tokens: 2048,
  });
});

Deno.test("openai: the key is optional (local servers): no Authorization header without it", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["local"], { input: 3, output: 1 })));
  const result = await testRunner({ baseEnv: cleanBaseEnv() })(
    httpAgent("openai", `${stub.origin}/v1/chat/completions`),
    "hi",
    { role: "child" },
  );
  assert.equal(result.ok, true, result.error);
  assert.equal(stub.requests[0].headers.get("authorization"), null);
  assert.equal(stub.requests[0].path, "/v1/chat/completions", "a pasted full URL is tolerated");
  assert.equal((stub.requests[0].body as Record<string, unknown>).max_tokens, undefined);
});

Deno.test("openai: apiKeyEnv picks another variable (e.g. OpenRouter's)", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["x"], { input: 1, output: 1 })));
  const result = await testRunner({
    baseEnv: cleanBaseEnv({ OPENROUTER_API_KEY: "sk-or-1" }),
  })(httpAgent("openai", stub.origin, { apiKeyEnv: "OPENROUTER_API_KEY" }), "hi", {
    role: "child",
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(stub.requests[0].headers.get("authorization"), "Bearer sk-or-1");
});

Deno.test("openai: deltas stream live (one text event per read); usage from the final chunk; cost from pricing", async () => {
  const frames = openaiFrames(["The ", "answer ", "is 4."], { input: 900, output: 7 });
  const gated = gatedResponse(frames.slice(0, 2), frames.slice(2));
  await using stub = startStub(() => gated.response);
  const log = new EventLog();
  const result = await runner()(httpAgent("openai", stub.origin, { model: "gpt-5-mini" }), "2+2", {
    role: "child",
    onEvent: (event) => {
      log.onEvent(event);
      if (event.type === "text") gated.release();
    },
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "The answer is 4.");
  assert.deepEqual(log.ofType("text").map((e) => e.text), ["The ", "answer is 4."]);
  assert.equal(log.events[0].type, "started");
  assert.equal(log.events.at(-1)?.type, "finished");
  const last = log.ofType("usage").at(-1)!;
  assert.deepEqual([last.inputTokens, last.outputTokens], [900, 7]);
  assert.equal(result.usage.inputTokens, 900);
  assert.equal(result.usage.outputTokens, 7);
  assert.equal(result.usage.costUsd, costOf(findPrice(mergePricing(), "gpt-5-mini")!, 900, 7));
});

Deno.test("openai: a server that reports no usage gets estimates; an unpriced model costs 0", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["abcdefgh"], undefined)));
  const result = await runner()(httpAgent("openai", stub.origin, { model: "llama3.1" }), "1234", {
    role: "child",
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.usage.estimated, true);
  assert.equal(result.usage.inputTokens, 1, "4 prompt characters ≈ 1 token");
  assert.equal(result.usage.outputTokens, 2, "8 answer characters ≈ 2 tokens");
  assert.equal(result.usage.costUsd, 0);
});

Deno.test("openai: a stream that ends after finish_reason without [DONE] still completes", async () => {
  await using stub = startStub(() =>
    sseResponse(openaiFrames(["done"], { input: 1, output: 1 }, { done: false }))
  );
  const result = await runner()(httpAgent("openai", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "done");
});

Deno.test("openai: a stream cut before finish_reason fails but keeps the partial text", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["half"], undefined).slice(0, 2)));
  const result = await runner()(httpAgent("openai", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(result.error, "http-openai: stream ended without [DONE]");
  assert.equal(result.text, "half");
});

Deno.test("openai: error bodies of every common shape give status and message", async () => {
  const bodies: [unknown, string][] = [
    [
      { error: { message: "model 'x' not found", type: "not_found_error" } },
      "not_found_error: model 'x' not found",
    ],
    [
      { error: "model 'x' not found, try pulling it first" },
      "model 'x' not found, try pulling it first",
    ],
    [
      { object: "error", message: "The model `x` does not exist.", code: 404 },
      "The model `x` does not exist.",
    ],
    [{ detail: "Not Found" }, "Not Found"],
  ];
  for (const [body, message] of bodies) {
    await using stub = startStub(() => jsonResponse(404, body));
    const result = await runner()(httpAgent("openai", stub.origin), "hi", { role: "child" });
    assert.equal(
      result.error,
      `http-openai: HTTP 404 from ${stub.origin}/chat/completions: ${message}`,
    );
  }
  await using stub = startStub(() => new Response("<h1>Bad Gateway</h1>", { status: 502 }));
  const result = await runner({ sleep: () => Promise.resolve() })(
    httpAgent("openai", stub.origin),
    "hi",
    { role: "child" },
  );
  assert.match(result.error!, /HTTP 502 from .*: <h1>Bad Gateway<\/h1> \(after one retry\)$/);
});

Deno.test("openai: 429 (retry-after-ms) and 500 (retry-after 0) are retried once after that wait", async () => {
  const cases: [number, Record<string, string>, number][] = [
    [429, { "retry-after-ms": "250" }, 250],
    [500, { "retry-after": "0" }, 0],
  ];
  for (const [status, headers, wait] of cases) {
    await using stub = startStub((_, index) =>
      index === 0
        ? jsonResponse(status, { error: { message: "not now", type: "requests" } }, headers)
        : sseResponse(openaiFrames(["after the wait"], { input: 1, output: 3 }))
    );
    const waits: number[] = [];
    const result = await runner({ sleep: (ms) => (waits.push(ms), Promise.resolve()) })(
      httpAgent("openai", stub.origin),
      "hi",
      { role: "child" },
    );
    assert.equal(result.ok, true, result.error);
    assert.equal(result.text, "after the wait");
    assert.deepEqual(waits, [wait], `status ${status}`);
    assert.equal(stub.requests.length, 2);
  }
});

Deno.test("openai: connection refused is a clear failure", async () => {
  const port = closedPort();
  const result = await runner()(httpAgent("openai", `http://localhost:${port}/v1`), "hi", {
    role: "child",
  });
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    `http-openai: cannot reach http://localhost:${port}/v1/chat/completions: connection refused`,
  );
});

Deno.test("openai: a malformed stream and a mid-stream error object both fail clearly", async () => {
  {
    await using stub = startStub(() => sseResponse(["data: [DON\n\n"]));
    const result = await runner()(httpAgent("openai", stub.origin), "hi", { role: "child" });
    assert.equal(
      result.error,
      'http-openai: malformed stream: 1 unparseable event(s), last: "[DON"; ' +
        "stream ended without [DONE]",
    );
  }
  {
    await using stub = startStub(() =>
      sseResponse([
        ...openaiFrames(["so far"], undefined).slice(0, 2),
        frame(undefined, {
          error: { message: "context length exceeded", type: "invalid_request" },
        }),
      ])
    );
    const result = await runner()(httpAgent("openai", stub.origin), "hi", { role: "child" });
    assert.equal(
      result.error,
      "http-openai: error event: invalid_request: context length exceeded",
    );
    assert.equal(result.text, "so far");
  }
});

Deno.test("openai: an event larger than the line limit is malformed, never buffered whole", async () => {
  await using stub = startStub(() => sseResponse([`data: "${"x".repeat(5000)}`]));
  const result = await runner({ maxLineBytes: 1024 })(httpAgent("openai", stub.origin), "hi", {
    role: "child",
  });
  assert.equal(result.error, "http-openai: malformed stream: an SSE line exceeds 1024 bytes");
});

Deno.test("openai: cancellation aborts the upstream request", async () => {
  await using stub = startStub(() =>
    sseResponse(openaiFrames(["streaming…"], undefined).slice(0, 2), { hang: true })
  );
  const controller = new AbortController();
  const result = await runner()(httpAgent("openai", stub.origin), "hi", {
    role: "child",
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "text") controller.abort();
    },
  });
  assert.equal(result.aborted, true);
  assert.equal(result.error, "http-openai: aborted");
  await within(stub.clientGone, "the stub to see the client go");
});

Deno.test("openai: a signal aborted before the start sends nothing", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["x"], undefined)));
  const result = await runner()(httpAgent("openai", stub.origin), "hi", {
    role: "child",
    signal: AbortSignal.abort(),
  });
  assert.equal(result.aborted, true);
  assert.equal(result.error, "http-openai: aborted before start");
  assert.equal(stub.requests.length, 0);
});

Deno.test("openai: finish_reason length is reported as an activity", async () => {
  await using stub = startStub(() =>
    sseResponse(openaiFrames(["cut sho"], { input: 1, output: 5 }, { finishReason: "length" }))
  );
  const log = new EventLog();
  const result = await runner()(httpAgent("openai", stub.origin), "hi", {
    role: "child",
    onEvent: log.onEvent,
  });
  assert.equal(result.ok, true, result.error);
  assert.deepEqual(log.ofType("activity").map((e) => e.text), [
    "answer cut at the token limit (maxTokens)",
  ]);
});

Deno.test("openai: an upstream that echoes the key in its message gets it masked", async () => {
  await using stub = startStub(() =>
    jsonResponse(401, {
      error: { message: "Incorrect API key provided: sk-openai-test.", type: "invalid_api_key" },
    })
  );
  const log = new EventLog();
  const result = await runner()(httpAgent("openai", stub.origin), "hi", {
    role: "child",
    onEvent: log.onEvent,
  });
  assert.equal(
    result.error,
    `http-openai: HTTP 401 from ${stub.origin}/chat/completions: invalid_api_key: ` +
      "Incorrect API key provided: ***.",
  );
  assert.doesNotMatch(JSON.stringify(log.events), /sk-openai-test/);
});
