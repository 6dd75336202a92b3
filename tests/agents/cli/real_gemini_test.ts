/**
 * Runs the REAL `gemini` CLI as a council child against a small Gemini API stub: it keeps the
 * user's login (settings and credentials in ~/.gemini) and leaves no chat history there.
 * Skipped, with a visible reason, when the CLI is not installed (see real_claude_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { GEMINI_HISTORY } from "../../../src/agents/cli/gemini.ts";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";

const gemini = findTestCli("gemini", /^\d+\.\d+/);
if (!gemini.path) console.log(`real_gemini_test: skipped: ${gemini.reason}`);

/** `streamGenerateContent?alt=sse`: one candidate with the reply, then the stream ends. */
function startStub(reply: string) {
  const seen: { path: string; key: string | null }[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const url = new URL(req.url);
    seen.push({ path: url.pathname, key: req.headers.get("x-goog-api-key") });
    if (!url.pathname.endsWith(":streamGenerateContent")) {
      return new Response("not found", { status: 404 });
    }
    const chunk = {
      candidates: [{
        content: { role: "model", parts: [{ text: reply }] },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 5, totalTokenCount: 35 },
      modelVersion: "gemini-2.5-flash",
    };
    return new Response(`data: ${JSON.stringify(chunk)}\r\n\r\n`, {
      headers: { "content-type": "text/event-stream" },
    });
  });
  return { server, seen, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test({
  name: "real gemini: a child keeps the user's login and leaves no history in ~/.gemini",
  ignore: !gemini.path,
  async fn() {
    await using scope = await tempDir("council-gemini-");
    const home = join(scope.path, "home");
    const project = join(scope.path, "project");
    await Deno.mkdir(join(home, ".gemini"), { recursive: true });
    await Deno.mkdir(project);
    // The user's login: API-key auth chosen in settings (without it, headless gemini refuses).
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    await Deno.writeTextFile(join(home, ".gemini", "settings.json"), JSON.stringify(settings));
    const stub = startStub("Hello from the gemini stub");
    try {
      const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
        {
          name: "gemini",
          runner: "gemini",
          model: "gemini-2.5-flash",
          command: gemini.path,
          args: [],
          env: {
            HOME: home,
            GOOGLE_GEMINI_BASE_URL: stub.url,
            GEMINI_API_KEY: "test-gemini-key",
          },
          timeoutMs: 120_000,
        },
        "Say hello.",
        { role: "child", cwd: project },
      );
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "Hello from the gemini stub");
      assert.ok(stub.seen.some((r) => r.key === "test-gemini-key"), JSON.stringify(stub.seen));
      const left = [...Deno.readDirSync(join(home, ".gemini"))].map((e) => e.name).sort();
      assert.deepEqual(left, ["settings.json"], "no chats, history or projects were written");
      for (const name of GEMINI_HISTORY) assert.ok(!left.includes(name), name);
    } finally {
      await stub.server.shutdown();
    }
  },
});
