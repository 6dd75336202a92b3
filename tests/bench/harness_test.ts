import assert from "node:assert/strict";
import { parseWrkOutput } from "../../scripts/bench/http_load.ts";
import { OPT_IN_SCENARIOS, SCENARIOS, selectScenarios } from "../../scripts/bench/main.ts";
import { TokenLatencies } from "../../scripts/bench/scenarios/passthrough.ts";
import { largeMessagesBody } from "../../scripts/bench/scenarios/utility.ts";

Deno.test("TokenLatencies counts each stamped token once, by its first arrival", () => {
  const latencies = new TokenLatencies();
  // Stamps are epoch microseconds; receive times epoch milliseconds.
  latencies.add("t0@1000000 t1@1001500 ", 1002);
  latencies.add("t0@1000000 t1@1001500 t2@1002000 ", 1010);
  assert.deepEqual(latencies.values, [2, 0.5, 8]);
  latencies.reset();
  latencies.add("t0@1000000 ", 1001);
  assert.deepEqual(latencies.values, [2, 0.5, 8, 1]);
});

Deno.test("parseWrkOutput reads req/s, p50/p99 in ms and errors", () => {
  const output = `Running 5s test @ http://127.0.0.1:1/v1/models
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   412.00us  100.00us   5.00ms   90.00%
  Latency Distribution
     50%  380.00us
     75%  450.00us
     90%  600.00us
     99%    1.25ms
  120000 requests in 5.00s, 30.00MB read
  Socket errors: connect 0, read 2, write 1, timeout 0
  Non-2xx or 3xx responses: 3
Requests/sec:  24000.50
Transfer/sec:      6.00MB
`;
  assert.deepEqual(parseWrkOutput(output), {
    requests: 120000,
    requestsPerSecond: 24000.5,
    p50: 0.38,
    p99: 1.25,
    errors: 6,
  });
});

Deno.test("selectScenarios keeps the runner's order and rejects unknown names", () => {
  assert.equal(selectScenarios(SCENARIOS, undefined).length, SCENARIOS.length);
  assert.deepEqual(
    selectScenarios(SCENARIOS, "utility, parallel").map((s) => s.name),
    ["parallel", "utility"],
  );
  assert.throws(() => selectScenarios(SCENARIOS, "parallel,nope"), /unknown scenario nope/);
});

Deno.test("an opt-in scenario runs only when named", () => {
  assert.ok(
    !selectScenarios(SCENARIOS, undefined, OPT_IN_SCENARIOS).some((s) => s.name === "team"),
  );
  assert.deepEqual(
    selectScenarios(SCENARIOS, "team", OPT_IN_SCENARIOS).map((s) => s.name),
    ["team"],
  );
});

Deno.test("every scenario has a distinct name", () => {
  const names = SCENARIOS.map((s) => s.name);
  assert.equal(new Set(names).size, names.length);
});

Deno.test("largeMessagesBody is a Messages request of about the asked size", () => {
  const text = largeMessagesBody(200 * 1024);
  assert.ok(text.length >= 200 * 1024 && text.length < 210 * 1024, `${text.length}`);
  const body = JSON.parse(text);
  assert.equal(body.messages[0].role, "user");
  assert.ok(body.messages.some((m: { content: unknown }) => Array.isArray(m.content)));
});
