/**
 * Runs the REAL `codex` CLI (npm @openai/codex) as a council child against a small OpenAI
 * Responses stub on a local port. Skipped, with a visible reason, when the CLI is not
 * installed (`npm install @openai/codex@0.169.0` in ~/.cache/council-gateway-test, or
 * $COUNCIL_TEST_CLI_DIR, or a `codex` on PATH).
 */
import assert from "node:assert/strict";
import { startFakeVendor } from "../../support/fake_vendor/mod.ts";
import { tokenPieces } from "../../support/fake_vendor/latency.ts";
import {
  cleanBaseEnv,
  EventLog,
  findTestCli,
  tempDir,
  testRunner,
} from "../../support/agent_runner.ts";

const codex = findTestCli("codex", /codex-cli/);
if (!codex.path) console.log(`real_codex_test: skipped: ${codex.reason}`);

/** The fake vendor answering every model call with `reply`; its Responses calls and their URL. */
function startStub(reply: string) {
  const vendor = startFakeVendor({ answer: { text: reply } });
  return {
    vendor,
    calls: () => vendor.requests.filter((r) => r.api === "responses"),
    url: `${vendor.origin}/v1`,
  };
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
      const [call] = stub.calls();
      assert.deepEqual(
        [result.usage.inputTokens, result.usage.outputTokens, result.usage.estimated],
        [call.cache.total, tokenPieces("Hello from the responses stub").length, true],
        "tokens as codex reports them (the fake's usage), cost priced from the table",
      );
      assert.ok(result.usage.costUsd > 0);
      assert.equal(stub.calls().length, 1);
      assert.equal(call.headers.get("authorization"), "Bearer test-key");
      assert.match(
        JSON.stringify((call.body as { input: unknown }).input),
        /Say hello from the codex test\./,
      );
    } finally {
      await stub.vendor.close();
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
      assert.equal(stub.calls()[0].headers.get("authorization"), "Bearer my-key");
      assert.deepEqual(await sessionFiles(`${home.path}/.codex`), [], "--ephemeral");
    } finally {
      await stub.vendor.close();
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
      assert.equal(gateway.calls().length, 0, "no request came back to the gateway");
    } finally {
      await gateway.vendor.close();
      await vendor.vendor.close();
    }
  },
});
