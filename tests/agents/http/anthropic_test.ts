/**
 * The `anthropic` runner against a local Messages stub: what it sends, the events and result
 * it makes of the stream, usage and cost, and every way the upstream can fail.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { costOf, findPrice, mergePricing } from "../../../src/agents/cost.ts";
import { DEFAULT_MAX_TOKENS } from "../../../src/agents/http/anthropic.ts";
import { withoutUserInfo } from "../../../src/agents/http/url_credentials.ts";
import { cleanBaseEnv, EventLog, testRunner } from "../../support/agent_runner.ts";
import {
  anthropicFrames,
  closedPort,
  frame,
  gatedResponse,
  httpAgent,
  jsonResponse,
  sseResponse,
  startStub,
} from "../../support/model_api_stub.ts";
import { within } from "../../support/wait.ts";

const KEY_ENV = cleanBaseEnv({ ANTHROPIC_API_KEY: "sk-ant-test", STUB_KEY: "sk-stub-other" });

function runner(options: Parameters<typeof testRunner>[0] = {}) {
  return testRunner({ baseEnv: KEY_ENV, ...options });
}

Deno.test("anthropic: one streaming POST to /v1/messages with key, version and the prompt as one user message", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames(["ok"], { input: 5, output: 1 })));
  const agent = httpAgent("anthropic", stub.origin, {
    headers: { "x-extra": "yes" },
    maxTokens: 1234,
  });
  const result = await runner()(agent, "Line one\nLine two", { role: "child" });
  assert.equal(result.ok, true, result.error);
  assert.equal(stub.requests.length, 1);
  const [request] = stub.requests;
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/v1/messages");
  assert.equal(request.headers.get("x-api-key"), "sk-ant-test");
  assert.equal(request.headers.get("anthropic-version"), "2023-06-01");
  assert.equal(request.headers.get("x-extra"), "yes");
  assert.equal(request.headers.get("x-council-depth"), "1", "the recursion marker goes along");
  assert.equal(request.headers.get("authorization"), null);
  assert.deepEqual(request.body, {
    model: "claude-sonnet-4-5",
    max_tokens: 1234,
    stream: true,
    messages: [{ role: "user", content: "Line one\nLine two" }],
  });
});

Deno.test("anthropic: apiKeyEnv names the variable; the model override and default max_tokens apply", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames(["ok"], { input: 5, output: 1 })));
  const agent = httpAgent("anthropic", `${stub.origin}/v1/`, { apiKeyEnv: "STUB_KEY" });
  const result = await runner()(agent, "hi", { role: "judge", model: "claude-haiku-4-5" });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.model, "claude-haiku-4-5");
  const [request] = stub.requests;
  assert.equal(request.path, "/v1/messages", "a base URL ending in /v1 is tolerated");
  assert.equal(request.headers.get("x-api-key"), "sk-stub-other");
  const body = request.body as Record<string, unknown>;
  assert.equal(body.model, "claude-haiku-4-5");
  assert.equal(body.max_tokens, DEFAULT_MAX_TOKENS);
});

Deno.test("anthropic: deltas stream live (one text event per read), usage is reported with cache reads, cost comes from pricing at cached prices", async () => {
  const frames = anthropicFrames(["Hel", "lo, ", "world."], {
    input: 1000,
    output: 42,
    cacheRead: 200,
  });
  // The first delta arrives alone; the rest is sent only once it has come out as an event.
  const gated = gatedResponse(frames.slice(0, 4), frames.slice(4));
  await using stub = startStub(() => gated.response);
  const agent = httpAgent("anthropic", stub.origin, { model: "claude-sonnet-4-5" });
  const log = new EventLog();
  const result = await runner()(agent, "Say hello", {
    role: "child",
    onEvent: (event) => {
      log.onEvent(event);
      if (event.type === "text") gated.release();
    },
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "Hello, world.");
  assert.deepEqual(log.ofType("text").map((e) => e.text), ["Hel", "lo, world."]);
  assert.deepEqual(log.ofType("started"), [{
    type: "started",
    agent: "http-anthropic",
    model: "claude-sonnet-4-5",
  }]);
  assert.equal(log.events[0].type, "started");
  assert.equal(log.events.at(-1)?.type, "finished");
  const last = log.ofType("usage").at(-1)!;
  assert.equal(last.inputTokens, 1200, "cache reads count as input");
  assert.equal(last.outputTokens, 42);
  assert.equal(result.usage.inputTokens, 1200);
  assert.equal(result.usage.outputTokens, 42);
  assert.equal(result.usage.cacheReadTokens, 200);
  assert.equal(result.usage.cacheWriteTokens, 0);
  const price = findPrice(mergePricing(), "claude-sonnet-4-5")!;
  // Cache reads are billed at a tenth of the input price (Sonnet: $3 in, $15 out).
  assert.equal(price.input, 3);
  assert.ok(Math.abs(result.usage.costUsd - (1000 * 3 + 200 * 0.3 + 42 * 15) / 1e6) < 1e-12);
  assert.ok(result.usage.costUsd < costOf(price, 1200, 42));
  assert.equal(result.exitCode, null);
  assert.equal(result.timedOut, false);
  assert.equal(result.aborted, false);
});

Deno.test("anthropic: config pricing overrides the built-in price", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["x"], { input: 1_000_000, output: 1_000_000 }))
  );
  const agent = httpAgent("anthropic", stub.origin, { model: "my-finetune" });
  const result = await runner({ pricing: { "my-finetune": { input: 2, output: 3 } } })(
    agent,
    "hi",
    { role: "child" },
  );
  assert.equal(result.usage.costUsd, 5);
});

Deno.test("anthropic: a 4xx ends as one clear failure with status and upstream message, not retried", async () => {
  await using stub = startStub(() =>
    jsonResponse(400, {
      type: "error",
      error: { type: "invalid_request_error", message: "max_tokens: 999999 > 64000" },
    })
  );
  const agent = httpAgent("anthropic", stub.origin);
  const log = new EventLog();
  const result = await runner()(agent, "hi", { role: "child", onEvent: log.onEvent });
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    `http-anthropic: HTTP 400 from ${stub.origin}/v1/messages: invalid_request_error: ` +
      "max_tokens: 999999 > 64000",
  );
  assert.equal(stub.requests.length, 1, "a 4xx other than 429 is not retried");
  assert.equal(log.ofType("finished").length, 1);
  assert.deepEqual(result.usage, { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true });
});

Deno.test("anthropic: user info in baseUrl is sent as Basic credentials (unless a header sets its own) and never shown", async () => {
  await using stub = startStub((_, index) =>
    index < 2 ? sseResponse(anthropicFrames(["ok"], { input: 1, output: 1 })) : jsonResponse(400, {
      type: "error",
      error: { type: "invalid_request_error", message: "no" },
    })
  );
  const withUser = stub.origin.replace("http://", "http://us%40er:p%3Ass@");
  const run = runner();
  assert.equal((await run(httpAgent("anthropic", withUser), "hi", { role: "child" })).ok, true);
  assert.equal(stub.requests[0].headers.get("authorization"), `Basic ${btoa("us@er:p:ss")}`);
  const own = httpAgent("anthropic", withUser, { headers: { Authorization: "Bearer own" } });
  assert.equal((await run(own, "hi", { role: "child" })).ok, true);
  assert.equal(stub.requests[1].headers.get("authorization"), "Bearer own");
  const failed = await run(httpAgent("anthropic", withUser), "hi", { role: "child" });
  assert.equal(
    failed.error,
    `http-anthropic: HTTP 400 from ${stub.origin}/v1/messages: invalid_request_error: no`,
  );
  assert.equal(withoutUserInfo("https://u:p%40ss@host:8443/v1?x=1"), "https://host:8443/v1?x=1");
  assert.equal(withoutUserInfo("http://localhost:11434/v1"), "http://localhost:11434/v1");
});

Deno.test("anthropic: 429 is retried once after retry-after (seconds), then succeeds", async () => {
  await using stub = startStub((_, index) =>
    index === 0
      ? jsonResponse(
        429,
        { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
        { "retry-after": "3" },
      )
      : sseResponse(anthropicFrames(["second time"], { input: 3, output: 2 }))
  );
  const waits: number[] = [];
  const sleep = (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };
  const result = await runner({ sleep })(httpAgent("anthropic", stub.origin), "hi", {
    role: "child",
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "second time");
  assert.deepEqual(waits, [3000]);
  assert.equal(stub.requests.length, 2);
});

Deno.test("anthropic: a 5xx twice fails after one retry, naming status and message", async () => {
  await using stub = startStub(() =>
    jsonResponse(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
  );
  const waits: number[] = [];
  const result = await runner({ sleep: (ms) => (waits.push(ms), Promise.resolve()) })(
    httpAgent("anthropic", stub.origin),
    "hi",
    { role: "child" },
  );
  assert.equal(result.ok, false);
  assert.match(
    result.error!,
    /^http-anthropic: HTTP 529 from .*: overloaded_error: Overloaded \(after one retry\)$/,
  );
  assert.equal(stub.requests.length, 2, "exactly one retry");
  assert.deepEqual(waits, [1000], "no retry-after: a short default pause");
});

Deno.test("anthropic: the retry of a 5xx is announced as a retry event before its wait", async () => {
  await using stub = startStub(() =>
    jsonResponse(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
  );
  const log = new EventLog();
  let retriesBeforeWait = -1;
  const sleep = () => ((retriesBeforeWait = log.ofType("retry").length), Promise.resolve());
  await runner({ sleep })(httpAgent("anthropic", stub.origin), "hi", {
    role: "child",
    onEvent: log.onEvent,
  });
  const [retry, ...more] = log.ofType("retry");
  assert.equal(more.length, 0, "one retry, one announcement");
  assert.equal(retriesBeforeWait, 1, "announced before the wait, as a CLI announces its own");
  assert.equal(retry.attempt, 1);
  assert.match(retry.reason ?? "", /HTTP 529 .*overloaded_error: Overloaded/);
});

Deno.test("anthropic: a retry-after beyond the limit is not waited for", async () => {
  await using stub = startStub(() =>
    jsonResponse(429, { type: "error", error: { type: "rate_limit_error", message: "quota" } }, {
      "retry-after": "120",
    })
  );
  const waits: number[] = [];
  const result = await runner({ sleep: (ms) => (waits.push(ms), Promise.resolve()) })(
    httpAgent("anthropic", stub.origin),
    "hi",
    { role: "child" },
  );
  assert.equal(result.ok, false);
  assert.match(
    result.error!,
    /HTTP 429 .*rate_limit_error: quota \(retry-after 120 s is over the 30 s limit: not retried\)/,
  );
  assert.deepEqual(waits, []);
  assert.equal(stub.requests.length, 1);
});

Deno.test("anthropic: connection refused is a clear failure", async () => {
  const port = closedPort();
  const result = await runner()(httpAgent("anthropic", `http://127.0.0.1:${port}`), "hi", {
    role: "child",
  });
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    `http-anthropic: cannot reach http://127.0.0.1:${port}/v1/messages: connection refused`,
  );
});

Deno.test("anthropic: a stream of garbage is a malformed-stream failure", async () => {
  await using stub = startStub(() => sseResponse(["data: {not json\n\n", "data: <html>\n\n"]));
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    'http-anthropic: malformed stream: 2 unparseable event(s), last: "<html>"; ' +
      "stream ended without message_stop",
  );
});

Deno.test("anthropic: a stream cut before message_stop fails but keeps the partial text", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["partial"], { input: 1, output: 1 }, { stop: false }))
  );
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(result.error, "http-anthropic: stream ended without message_stop");
  assert.equal(result.text, "partial");
});

Deno.test("anthropic: a JSON reply where a stream was asked for is malformed", async () => {
  await using stub = startStub(() => jsonResponse(200, { type: "message", content: [] }));
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.match(
    result.error!,
    /malformed stream: expected text\/event-stream, got application\/json/,
  );
});

Deno.test("anthropic: an error event mid-stream ends the run as a failure with its message", async () => {
  await using stub = startStub(() =>
    sseResponse([
      ...anthropicFrames(["half an ans"], { input: 1, output: 1 }).slice(0, 4),
      frame("error", {
        type: "error",
        error: { type: "overloaded_error", message: "Overloaded" },
      }),
    ])
  );
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(result.error, "http-anthropic: error event: overloaded_error: Overloaded");
  assert.equal(result.text, "half an ans");
});

Deno.test("anthropic: cancellation aborts the upstream request (the stub sees the client go)", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["first words"], { input: 1, output: 1 }).slice(0, 4), {
      hang: true,
    })
  );
  const controller = new AbortController();
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", {
    role: "child",
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "text") controller.abort();
    },
  });
  assert.equal(result.ok, false);
  assert.equal(result.aborted, true);
  assert.equal(result.error, "http-anthropic: aborted");
  assert.equal(result.text, "first words");
  await within(stub.clientGone, "the stub to see the client go");
});

Deno.test("anthropic: the time-out (on the injected clock) aborts the request", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["slow"], { input: 1, output: 1 }).slice(0, 4), { hang: true })
  );
  const clock = new FakeClock();
  const result = await runner({ clock })(
    httpAgent("anthropic", stub.origin, { timeoutMs: 5000 }),
    "hi",
    {
      role: "child",
      onEvent: (event) => {
        if (event.type === "text") clock.advance(5000);
      },
    },
  );
  assert.equal(result.ok, false);
  assert.equal(result.timedOut, true);
  assert.equal(result.error, "http-anthropic: timed out after 5s");
  await within(stub.clientGone, "the stub to see the client go");
  assert.equal(clock.pending, 0, "no timer left behind");
});

Deno.test("anthropic: a missing key fails before any request, naming the variable", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames(["x"], { input: 1, output: 1 })));
  const result = await testRunner({ baseEnv: cleanBaseEnv() })(
    httpAgent("anthropic", stub.origin),
    "hi",
    { role: "child" },
  );
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    "http-anthropic: ANTHROPIC_API_KEY is not set in the gateway's environment (apiKeyEnv)",
  );
  assert.equal(stub.requests.length, 0);
});

Deno.test("anthropic: the key is read even when passApiKeys is off (it only gates CLI children)", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames(["x"], { input: 1, output: 1 })));
  const result = await runner({ passApiKeys: false })(httpAgent("anthropic", stub.origin), "hi", {
    role: "child",
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(stub.requests[0].headers.get("x-api-key"), "sk-ant-test");
});

Deno.test("anthropic: a base URL at the gateway's own origin is refused at run time", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames(["x"], { input: 1, output: 1 })));
  const port = new URL(stub.origin).port;
  const result = await runner({ selfOrigins: () => [`http://localhost:${port}`] })(
    httpAgent("anthropic", stub.origin),
    "hi",
    { role: "child" },
  );
  assert.equal(result.ok, false);
  assert.match(result.error!, /points at this gateway itself \(refused: recursion\)/);
  assert.equal(stub.requests.length, 0);
});

Deno.test("anthropic: runs of one agent reuse one connection", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames(["x"], { input: 1, output: 1 })));
  const run = runner();
  const agent = httpAgent("anthropic", stub.origin);
  for (let i = 0; i < 3; i++) {
    const result = await run(agent, "hi", { role: "child" });
    assert.equal(result.ok, true, result.error);
  }
  const ports = new Set(stub.requests.map((r) => r.clientPort));
  assert.equal(ports.size, 1, `expected one connection, saw client ports ${[...ports]}`);
});

Deno.test("anthropic: an empty answer is a failure", async () => {
  await using stub = startStub(() => sseResponse(anthropicFrames([], { input: 1, output: 0 })));
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(result.error, "http-anthropic: empty answer");
});

Deno.test("anthropic: a redirect is not followed, so the key never reaches another host", async () => {
  await using elsewhere = startStub(() =>
    sseResponse(anthropicFrames(["stolen"], { input: 1, output: 1 }))
  );
  await using stub = startStub(() =>
    new Response(null, { status: 307, headers: { location: `${elsewhere.origin}/v1/messages` } })
  );
  const result = await runner()(httpAgent("anthropic", stub.origin), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.match(
    result.error ?? "",
    /HTTP 307 .*redirect to http:\/\/127\.0\.0\.1:\d+\/v1\/messages not followed/,
  );
  assert.equal(elsewhere.requests.length, 0, "nothing was sent to the redirect's target");
});
