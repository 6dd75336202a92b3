/**
 * Runs the REAL `codex` CLI (npm @openai/codex) as a council child against a small OpenAI
 * Responses stub on a local port. Skipped, with a visible reason, when the CLI is not
 * installed (`npm install @openai/codex@0.169.0` in ~/.cache/council-gateway-test, or
 * $COUNCIL_TEST_CLI_DIR, or a `codex` on PATH).
 */
import assert from "node:assert/strict";
import {
  cleanBaseEnv,
  EventLog,
  findTestCli,
  tempDir,
  testRunner,
} from "../../support/agent_runner.ts";

const codex = findTestCli("codex", /codex-cli/);
if (!codex.path) console.log(`real_codex_test: skipped: ${codex.reason}`);

/** A minimal Responses endpoint: one assistant message, then `response.completed`. */
function startStub(reply: string) {
  const seen: { authorization: string | null; body: Record<string, unknown> }[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/responses") {
      return new Response("not found", { status: 404 });
    }
    seen.push({ authorization: req.headers.get("authorization"), body: await req.json() });
    const item = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply, annotations: [] }],
    };
    const response = { id: "resp_1", object: "response", status: "completed", output: [item] };
    const usage = {
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 27,
    };
    const events: [string, unknown][] = [
      ["response.created", {
        type: "response.created",
        response: { ...response, status: "in_progress", output: [] },
      }],
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
      ["response.completed", { type: "response.completed", response: { ...response, usage } }],
    ];
    const sse = events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
      .join("");
    return new Response(sse, { headers: { "content-type": "text/event-stream" } });
  });
  return { server, seen, url: `http://127.0.0.1:${server.addr.port}/v1` };
}

Deno.test({
  name: "real codex: a child reads its prompt from stdin and reports usage",
  ignore: !codex.path,
  async fn() {
    await using home = await tempDir("council-codex-home-");
    await Deno.mkdir(`${home.path}/.codex`);
    const stub = startStub("Hello from the responses stub");
    try {
      const events = new EventLog();
      const provider =
        `model_providers.stub={name="Stub",base_url="${stub.url}",wire_api="responses",env_key="STUB_API_KEY"}`;
      const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
        {
          name: "codex-real",
          runner: "codex",
          model: "gpt-5.5",
          command: codex.path,
          args: ["-c", "model_provider=stub", "-c", provider, "-c", "analytics.enabled=false"],
          env: { HOME: home.path, CODEX_HOME: `${home.path}/.codex`, STUB_API_KEY: "test-key" },
          timeoutMs: 120_000,
        },
        "Say hello from the codex test.",
        { role: "child", onEvent: events.onEvent },
      );
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "Hello from the responses stub");
      assert.equal(events.text, "Hello from the responses stub");
      assert.deepEqual(
        [result.usage.inputTokens, result.usage.outputTokens, result.usage.estimated],
        [20, 7, true],
        "tokens as codex reports them, cost priced from the table",
      );
      assert.ok(result.usage.costUsd > 0);
      assert.equal(stub.seen.length, 1);
      assert.equal(stub.seen[0].authorization, "Bearer test-key");
      assert.match(JSON.stringify(stub.seen[0].body.input), /Say hello from the codex test\./);
    } finally {
      await stub.server.shutdown();
    }
  },
});

async function sessionFiles(codexHome: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await walk(`${dir}/${entry.name}`);
      else found.push(`${dir}/${entry.name}`);
    }
  };
  await walk(`${codexHome}/sessions`).catch(() => {});
  return found;
}

/** A user's ~/.codex/config.toml whose default provider is `url`. */
function userConfig(url: string): string {
  return [
    'model_provider = "mine"',
    "[analytics]",
    "enabled = false",
    "[model_providers.mine]",
    'name = "My provider"',
    `base_url = "${url}"`,
    'wire_api = "responses"',
    'env_key = "MY_PROVIDER_KEY"',
  ].join("\n") + "\n";
}

function userCodex(home: string, env: Record<string, string> = {}, args: string[] = []) {
  return {
    name: "codex",
    runner: "codex" as const,
    model: "gpt-5.5",
    command: codex.path,
    args,
    env: { HOME: home, CODEX_HOME: `${home}/.codex`, MY_PROVIDER_KEY: "my-key", ...env },
    timeoutMs: 120_000,
  };
}

Deno.test({
  name: "real codex: a child keeps the user's own provider and leaves no session files",
  ignore: !codex.path,
  async fn() {
    await using home = await tempDir("council-codex-home-");
    await Deno.mkdir(`${home.path}/.codex`);
    const stub = startStub("Answer from the user's provider");
    try {
      await Deno.writeTextFile(`${home.path}/.codex/config.toml`, userConfig(stub.url));
      const result = await testRunner({
        baseEnv: cleanBaseEnv(),
        killGraceMs: 1000,
        selfOrigins: () => ["http://127.0.0.1:1"],
      })(userCodex(home.path), "Say hello.", { role: "child" });
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "Answer from the user's provider");
      assert.equal(stub.seen[0].authorization, "Bearer my-key");
      assert.deepEqual(await sessionFiles(`${home.path}/.codex`), [], "--ephemeral");
    } finally {
      await stub.server.shutdown();
    }
  },
});

Deno.test({
  name: "real codex: when the user's default provider is the gateway, the child goes to OpenAI's",
  ignore: !codex.path,
  async fn() {
    await using home = await tempDir("council-codex-home-");
    await Deno.mkdir(`${home.path}/.codex`);
    const gateway = startStub("the gateway must not be asked");
    const vendor = startStub("Answer from the vendor");
    try {
      await Deno.writeTextFile(`${home.path}/.codex/config.toml`, userConfig(gateway.url));
      const result = await testRunner({
        baseEnv: cleanBaseEnv(),
        killGraceMs: 1000,
        selfOrigins: () => [new URL(gateway.url).origin],
      })(
        // openai_base_url stands in for api.openai.com (no model API is reachable here).
        userCodex(home.path, { OPENAI_API_KEY: "vendor-key" }, [
          "-c",
          `openai_base_url="${vendor.url}"`,
        ]),
        "Say hello.",
        { role: "child" },
      );
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "Answer from the vendor");
      assert.equal(gateway.seen.length, 0, "no request came back to the gateway");
    } finally {
      await gateway.server.shutdown();
      await vendor.server.shutdown();
    }
  },
});
