/**
 * Utility endpoints: `POST /v1/messages/count_tokens` with a 200 KB body (one connection for
 * latency, ten for throughput) and `GET /v1/models` under ten connections, each against the
 * bare Deno.serve doing the least the endpoint needs (parse the JSON, answer a constant).
 */
import { runLoad } from "../http_load.ts";
import {
  councilConfig,
  fakeAgent,
  type ServerProcess,
  startBaselineServer,
  startGateway,
} from "../processes.ts";
import { type Figure, summarize, type Summary } from "../results.ts";
import { type BenchContext, runs, type Scenario } from "../scenario.ts";

const BODY_BYTES = 200 * 1024;
const CONNECTIONS = 10;

/**
 * A Messages request of about `bytes` bytes shaped like a long coding session: a system
 * prompt, tool definitions, and turns of text, tool_use and tool_result blocks.
 */
export function largeMessagesBody(bytes: number): string {
  const body = {
    model: "svc-council",
    max_tokens: 4096,
    system: "You are a careful coding assistant. ".repeat(100),
    tools: Array.from({ length: 10 }, (_, i) => ({
      name: `tool_${i}`,
      description: `Tool number ${i}: reads or edits files in the workspace.`,
      input_schema: { type: "object", properties: { path: { type: "string" } } },
    })),
    messages: [] as unknown[],
  };
  for (let turn = 0; JSON.stringify(body).length < bytes; turn++) {
    const id = `toolu_${turn}`;
    body.messages.push(
      { role: "user", content: `Step ${turn}: look at src/module_${turn}.ts and fix the bug.` },
      {
        role: "assistant",
        content: [
          { type: "text", text: `Reading src/module_${turn}.ts first.` },
          { type: "tool_use", id, name: "tool_0", input: { path: `src/module_${turn}.ts` } },
        ],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: id,
          content: `export function f${turn}(x: number) {\n  return x * ${turn};\n}\n`.repeat(20),
        }],
      },
    );
  }
  return JSON.stringify(body);
}

async function postLatencies(url: string, body: string, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

async function loadFigures(
  context: BenchContext,
  name: string,
  method: "GET" | "POST",
  path: string,
  servers: { gateway: ServerProcess; bare: ServerProcess },
  body?: string,
): Promise<Figure[]> {
  const seconds = runs(context, 5, 2);
  const load = (server: ServerProcess) =>
    runLoad(
      { url: `${server.origin}${path}`, method, body },
      CONNECTIONS,
      seconds,
      context.tempDir,
    );
  const gateway = await load(servers.gateway);
  const bare = await load(servers.bare);
  context.log(`${name}: ${gateway.requestsPerSecond.toFixed(0)} req/s (${gateway.tool})`);
  const asSummary = (r: typeof gateway): Summary => ({
    n: r.requests,
    p50: r.p50,
    p99: r.p99,
    min: NaN,
    max: NaN,
    mean: NaN,
  });
  const errors = gateway.errors ? `; ${gateway.errors} errors` : "";
  return [
    {
      scenario: "utility",
      name: `${name}, ${CONNECTIONS} connections: throughput`,
      unit: "req/s",
      gateway: gateway.requestsPerSecond,
      baseline: { label: "bare Deno.serve", value: bare.requestsPerSecond },
      note: `${gateway.tool}, ${seconds} s per server${errors}`,
    },
    {
      scenario: "utility",
      name: `${name}, ${CONNECTIONS} connections: latency`,
      unit: "ms",
      gateway: asSummary(gateway),
      baseline: { label: "bare Deno.serve", value: asSummary(bare) },
    },
  ];
}

export const utility: Scenario = {
  name: "utility",
  description: "count_tokens with a 200 KB body and GET /v1/models: latency, req/s, p99",
  async run(context) {
    const agents = ["a", "b", "c"].map((name) => fakeAgent(context, name, "child.sh"));
    const [gateway, bare] = await Promise.all([
      startGateway(context, councilConfig(agents)),
      startBaselineServer(context),
    ]);
    const body = largeMessagesBody(BODY_BYTES);
    const figures: Figure[] = [];
    try {
      const count = runs(context, 500, 100);
      await postLatencies(`${gateway.origin}/v1/messages/count_tokens`, body, 50);
      await postLatencies(`${bare.origin}/v1/messages/count_tokens`, body, 50);
      const latencies = await postLatencies(
        `${gateway.origin}/v1/messages/count_tokens`,
        body,
        count,
      );
      const bareLatencies = await postLatencies(
        `${bare.origin}/v1/messages/count_tokens`,
        body,
        count,
      );
      const latency = summarize(latencies);
      figures.push({
        scenario: "utility",
        name: "count_tokens, 200 KB body, 1 connection: latency",
        unit: "ms",
        gateway: latency,
        baseline: { label: "bare Deno.serve", value: summarize(bareLatencies) },
        reference: "≤ 2 ms p50",
      });
      const servers = { gateway, bare };
      figures.push(
        ...await loadFigures(
          context,
          "count_tokens, 200 KB body",
          "POST",
          "/v1/messages/count_tokens",
          servers,
          body,
        ),
        ...await loadFigures(context, "GET /v1/models", "GET", "/v1/models", servers),
      );
    } finally {
      await Promise.all([gateway.stop(), bare.stop()]);
    }
    return { figures };
  },
};
