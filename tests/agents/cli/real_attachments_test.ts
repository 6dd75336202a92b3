/**
 * Images reach the model behind REAL agent CLIs: a gateway whose council is the real `claude`
 * and `codex` (and, alone, the real `gemini`) against a local upstream stub; the upstream
 * request carries the image's bytes, by SHA-256. Skipped, with a visible reason, when a CLI is
 * not installed (see real_claude_test.ts and real_codex_test.ts).
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import type { AgentConfig } from "../../../src/config/mod.ts";
import { startServer } from "../../../src/server/wiring.ts";
import { labelAttachments } from "../../../src/base/attachment.ts";
import { configOf } from "../../support/test_config.ts";
import { payloadsIn, PNG_4X3, sha256 } from "../../fixtures/images.ts";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";
import { type RecordedRequest, startFakeVendor } from "../../support/fake_vendor/mod.ts";

const claude = findTestCli("claude", /Claude Code/);
const codex = findTestCli("codex", /codex-cli/);
const gemini = findTestCli("gemini", /^\d+\.\d+/);
for (const [name, cli] of [["claude", claude], ["codex", codex], ["gemini", gemini]] as const) {
  if (!cli.path) console.log(`real_attachments_test: ${name} tests skipped: ${cli.reason}`);
}

function claudeAgent(upstream: string, home: string): AgentConfig {
  return {
    name: "claude",
    runner: "claude",
    model: "opus",
    command: claude.path,
    args: [],
    env: {
      HOME: home,
      ANTHROPIC_BASE_URL: upstream,
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

function codexAgent(upstream: string, home: string): AgentConfig {
  const provider =
    `model_providers.stub={name="Stub",base_url="${upstream}/v1",wire_api="responses",env_key="STUB_API_KEY"}`;
  return {
    name: "codex",
    runner: "codex",
    model: "gpt-5.5",
    command: codex.path,
    args: ["-c", "model_provider=stub", "-c", provider, "-c", "analytics.enabled=false"],
    env: { HOME: home, CODEX_HOME: `${home}/.codex`, STUB_API_KEY: "test-key" },
    timeoutMs: 120_000,
  };
}

/** The SHA-256 of every image or document payload in the requests to `path`. */
async function hashesAt(requests: RecordedRequest[], path: string): Promise<string[][]> {
  return await Promise.all(
    requests.filter((r) => r.path === path).map((r) => Promise.all(payloadsIn(r.body).map(sha256))),
  );
}

Deno.test({
  name: "real claude and codex children: a pasted image reaches the upstream byte for byte",
  ignore: !claude.path || !codex.path,
  async fn() {
    await using home = await tempDir("council-attach-home-");
    await Deno.mkdir(`${home.path}/.codex`);
    await using work = await tempDir("council-attach-work-");
    await Deno.writeTextFile(`${work.path}/page.html`, "<div style='color:red'></div>");
    await using state = await tempDir("council-attach-state-");
    await using upstream = startFakeVendor({
      answer: { text: "The screenshot shows a red square." },
    });
    const config = configOf(
      { port: 0, fanOutPolicy: "always" },
      [claudeAgent(upstream.origin, home.path), codexAgent(upstream.origin, home.path)],
    );
    const server = startServer(config, {
      graceMs: 0,
      runAgent: testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 }),
      workspaceRoot: state.path,
    });
    try {
      const response = await fetch(`${server.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude-opus-5-5",
          max_tokens: 1000,
          system: `You help with code.\n - Primary working directory: ${work.path}\n`,
          messages: [{
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_4X3 } },
              { type: "text", text: "Why is this square red? Explain what the image shows." },
            ],
          }],
        }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      const reply = await response.json();
      assert.equal(reply.content[0].text, "The screenshot shows a red square.");

      const png = await sha256(PNG_4X3);
      const claudeCalls = (await hashesAt(upstream.requests, "/v1/messages"))
        .filter((hashes) => hashes.length > 0);
      // The claude child and the synthesizer (also claude) each sent the image.
      assert.equal(claudeCalls.length, 2, JSON.stringify(claudeCalls));
      for (const hashes of claudeCalls) assert.deepEqual(hashes, [png]);
      const codexCalls = await hashesAt(upstream.requests, "/v1/responses");
      assert.deepEqual(codexCalls, [[png]], "the codex child sent it as its --image");

      // Codex names the file it attached; it was in a temp dir that is gone now.
      const codexText = JSON.stringify(
        upstream.requests.find((r) => r.path === "/v1/responses")?.body,
      );
      const file = /path=\\"([^"\\]+image-1\.png)\\"/.exec(codexText)?.[1];
      assert.ok(file, "codex shows the file's path");
      assert.match(file, /council-files-/);
      await assert.rejects(Deno.stat(dirname(file)), Deno.errors.NotFound);
      // The synthesizer runs in the working dir; each child of this fanned-out answer turn in
      // its own copy of it (under the state dir), which its prompt names instead.
      for (const request of upstream.requests) {
        const body = JSON.stringify(request.body);
        assert.ok(body.includes(work.path) !== body.includes(state.path), body.slice(0, 300));
      }
      assert.equal(
        upstream.requests.filter((r) => JSON.stringify(r.body).includes(state.path)).length,
        2,
        "the two children worked in their copies",
      );
      assert.deepEqual([...Deno.readDirSync(state.path)], [], "the copies are gone");
      const left = [...Deno.readDirSync(work.path)].map((e) => e.name);
      assert.deepEqual(left, ["page.html"], "no image bytes in the working directory");
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "real gemini child: an @path image reaches the upstream as inline data",
  ignore: !gemini.path,
  async fn() {
    await using home = await tempDir("council-attach-home-");
    await Deno.mkdir(`${home.path}/.gemini`);
    await Deno.writeTextFile(
      `${home.path}/.gemini/settings.json`,
      JSON.stringify({
        security: { auth: { selectedType: "gemini-api-key" } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      }),
    );
    await using upstream = startFakeVendor({ answer: { text: "A red square." } });
    const attachments = labelAttachments([
      { kind: "image", mediaType: "image/png", source: { type: "base64", data: PNG_4X3 } },
    ]);
    const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
      {
        name: "gemini",
        runner: "gemini",
        model: "gemini-2.5-flash",
        command: gemini.path,
        args: [],
        env: {
          HOME: home.path,
          GOOGLE_GEMINI_BASE_URL: upstream.origin,
          GEMINI_API_KEY: "test-key",
        },
        timeoutMs: 120_000,
      },
      "What does [image #1: image/png] show?",
      { role: "child", attachments },
    );
    assert.equal(result.ok, true, result.error);
    assert.equal(result.text, "A red square.");
    const calls = upstream.requests.filter((r) => r.path.endsWith(":streamGenerateContent"));
    assert.equal(calls.length, 1);
    assert.deepEqual(await Promise.all(payloadsIn(calls[0].body).map(sha256)), [
      await sha256(PNG_4X3),
    ]);
  },
});
