/**
 * The HTTP children's transports: which one a URL gets (proxy variables), and the fetch
 * transport (used behind a proxy) doing the same job as the default HTTP/1.1 client.
 */
import assert from "node:assert/strict";
import { h1Transport } from "../../src/agents/h1_client.ts";
import { fetchTransport, transportFor } from "../../src/agents/transport.ts";
import { cleanBaseEnv, EventLog, testRunner } from "./support.ts";
import {
  anthropicFrames,
  closedPort,
  httpAgent,
  jsonResponse,
  sseResponse,
  startStub,
  within,
} from "./http_stub.ts";

Deno.test("transport: our HTTP/1.1 client unless a proxy variable covers the URL and NO_PROXY does not exempt it", () => {
  const url = "https://api.anthropic.com/v1/messages";
  assert.equal(transportFor(url, {}), h1Transport);
  assert.equal(transportFor(url, { HTTPS_PROXY: "http://proxy:3128" }), fetchTransport);
  assert.equal(transportFor(url, { https_proxy: "http://proxy:3128" }), fetchTransport);
  assert.equal(transportFor(url, { ALL_PROXY: "http://proxy:3128" }), fetchTransport);
  assert.equal(transportFor(url, { HTTP_PROXY: "http://proxy:3128" }), h1Transport, "http only");
  assert.equal(
    transportFor("http://localhost:11434/v1", { HTTP_PROXY: "http://p:1", NO_PROXY: "localhost" }),
    h1Transport,
  );
  assert.equal(
    transportFor(url, { HTTPS_PROXY: "http://p:1", no_proxy: ".anthropic.com,example.org" }),
    h1Transport,
  );
  assert.equal(transportFor(url, { HTTPS_PROXY: "http://p:1", NO_PROXY: "*" }), h1Transport);
  assert.equal(
    transportFor(url, { HTTPS_PROXY: "http://p:1", NO_PROXY: "anthropic.co" }),
    fetchTransport,
  );
});

function fetchRunner(options: Parameters<typeof testRunner>[0] = {}) {
  return testRunner({
    baseEnv: cleanBaseEnv({ ANTHROPIC_API_KEY: "sk-ant-test" }),
    transport: fetchTransport,
    ...options,
  });
}

Deno.test("fetch transport: streams, reports usage, and sends the same request", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["via ", "fetch"], { input: 7, output: 2 }))
  );
  const log = new EventLog();
  const result = await fetchRunner()(httpAgent("anthropic", stub.origin), "hi", {
    role: "child",
    onEvent: log.onEvent,
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "via fetch");
  assert.equal(log.text, "via fetch");
  assert.deepEqual([result.usage.inputTokens, result.usage.outputTokens], [7, 2]);
  assert.equal(stub.requests[0].headers.get("x-api-key"), "sk-ant-test");
  assert.equal(stub.requests[0].headers.get("content-type"), "application/json");
});

Deno.test("fetch transport: errors, retry and connection refused read as with the HTTP/1.1 client", async () => {
  await using stub = startStub((_, index) =>
    index === 0
      ? jsonResponse(503, { type: "error", error: { type: "api_error", message: "busy" } }, {
        "retry-after": "0",
      })
      : jsonResponse(400, {
        type: "error",
        error: { type: "invalid_request_error", message: "no" },
      })
  );
  const result = await fetchRunner({ sleep: () => Promise.resolve() })(
    httpAgent("anthropic", stub.origin),
    "hi",
    { role: "child" },
  );
  assert.equal(
    result.error,
    `http-anthropic: HTTP 400 from ${stub.origin}/v1/messages: invalid_request_error: no ` +
      "(after one retry)",
  );
  const port = closedPort();
  const refused = await fetchRunner()(httpAgent("anthropic", `http://127.0.0.1:${port}`), "hi", {
    role: "child",
  });
  assert.match(refused.error!, /cannot reach .*: connection refused$/);
});

Deno.test("fetch transport: cancellation closes the connection", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["going"], { input: 1, output: 1 }).slice(0, 4), { hang: true })
  );
  const controller = new AbortController();
  const result = await fetchRunner()(httpAgent("anthropic", stub.origin), "hi", {
    role: "child",
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "text") controller.abort();
    },
  });
  assert.equal(result.aborted, true);
  await within(stub.clientGone, "the stub to see the client go");
});
