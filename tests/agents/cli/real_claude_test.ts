/**
 * Runs the REAL `claude` CLI (npm @anthropic-ai/claude-code) as a council child against a
 * small Anthropic Messages stub on a local port. Skipped, with a visible reason, when the CLI
 * is not installed. Install it for this test with:
 *
 *   mkdir -p ~/.cache/council-gateway-test && cd ~/.cache/council-gateway-test
 *   npm install @anthropic-ai/claude-code@2.1.197
 *   # if node_modules/.bin/claude prints "native binary not installed":
 *   node node_modules/@anthropic-ai/claude-code/install.cjs
 *
 * ($COUNCIL_TEST_CLI_DIR overrides the directory; a `claude` on PATH is used otherwise.)
 */
import assert from "node:assert/strict";
import { startFakeVendor } from "../../support/fake_vendor/mod.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";
import {
  cleanBaseEnv,
  EventLog,
  findTestCli,
  tempDir,
  testRunner,
} from "../../support/agent_runner.ts";

const claude = findTestCli("claude", /Claude Code/);
if (!claude.path) console.log(`real_claude_test: skipped: ${claude.reason}`);

/** The fake vendor answering every model call with `reply`; its Messages calls. */
function startStub(reply: string) {
  const vendor = startFakeVendor({ answer: { text: reply } });
  const seen = () =>
    vendor.requests.filter((r) => r.api === "messages").map((r) => ({
      headers: r.headers,
      body: r.body as Record<string, unknown>,
    }));
  return { vendor, seen, url: vendor.origin };
}

function realClaudeAgent(url: string, home: string): AgentConfig {
  return {
    name: "claude-real",
    runner: "claude",
    model: "opus",
    command: claude.path,
    args: [],
    env: {
      HOME: home,
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: "test-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_MAX_RETRIES: "0",
    },
    timeoutMs: 120_000,
  };
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = body.messages as { role: string; content: unknown }[];
  const last = messages.findLast((m) => m.role === "user");
  const content = last?.content;
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[]).map((b) => b.text ?? "").join("");
}

Deno.test({
  name: "real claude: a child streams text, reports cost, and carries the recursion marker",
  ignore: !claude.path,
  async fn() {
    await using homeScope = await tempDir("council-claude-home-");
    const home = homeScope.path;
    const stub = startStub("Hello from the stub");
    try {
      const events = new EventLog();
      const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
        realClaudeAgent(stub.url, home),
        "Say hello to the council test.",
        { role: "child", onEvent: events.onEvent },
      );
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "Hello from the stub");
      assert.equal(events.text, "Hello from the stub", "streamed live from text deltas");
      assert.equal(result.usage.estimated, false, "claude reports its cost");
      assert.ok(result.usage.costUsd > 0);
      assert.ok(result.usage.outputTokens > 0);

      const main = stub.seen().find((r) => lastUserText(r.body).includes("council test"));
      assert.ok(main, `the prompt reached the model (${stub.seen().length} requests)`);
      assert.equal(main.headers.get("x-council-depth"), "1", "ANTHROPIC_CUSTOM_HEADERS works");
      assert.equal(main.headers.get("x-api-key"), "test-key");
      assert.ok(Array.isArray(main.body.tools) && main.body.tools.length > 0, "a child has tools");
    } finally {
      await stub.vendor.close();
    }
  },
});

Deno.test({
  name: "real claude: the read-only judge runs without tools, on the haiku it was given",
  ignore: !claude.path,
  async fn() {
    await using homeScope = await tempDir("council-claude-home-");
    const home = homeScope.path;
    const stub = startStub('{"fanOut": false, "reason": "simple"}');
    try {
      const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
        realClaudeAgent(stub.url, home),
        "Would independent attempts improve this? Answer as JSON.",
        // As the council runs it: read-only.
        { role: "judge", model: "haiku", access: "read-only" },
      );
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, '{"fanOut": false, "reason": "simple"}');
      const main = stub.seen().find((r) => lastUserText(r.body).includes("independent attempts"));
      assert.ok(main);
      const tools = (main.body.tools ?? []) as unknown[];
      assert.equal(tools.length, 0, '`--tools ""` removed every tool');
      // Plan mode would have sent the `haiku` alias as a Sonnet model (a dearer judge).
      assert.match(String(main.body.model), /haiku/);
    } finally {
      await stub.vendor.close();
    }
  },
});
