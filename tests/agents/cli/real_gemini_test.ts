/**
 * Runs the REAL `gemini` CLI as a council child against a small Gemini API stub: it keeps the
 * user's login (settings and credentials in ~/.gemini) and leaves no chat history there.
 * Skipped, with a visible reason, when the CLI is not installed (see real_claude_test.ts).
 */
import assert from "node:assert/strict";
import { startFakeVendor } from "../../support/fake_vendor/mod.ts";
import { join } from "node:path";
import { GEMINI_HISTORY } from "../../../src/agents/cli/gemini.ts";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";

const gemini = findTestCli("gemini", /^\d+\.\d+/);
if (!gemini.path) console.log(`real_gemini_test: skipped: ${gemini.reason}`);

/** The fake vendor answering every model call with `reply`. */
function startStub(reply: string) {
  const vendor = startFakeVendor({ answer: { text: reply } });
  return { vendor, url: vendor.origin };
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
      const keys = stub.vendor.requests.map((r) => r.headers.get("x-goog-api-key"));
      assert.ok(keys.includes("test-gemini-key"), JSON.stringify(keys));
      const left = [...Deno.readDirSync(join(home, ".gemini"))].map((e) => e.name).sort();
      assert.deepEqual(left, ["settings.json"], "no chats, history or projects were written");
      for (const name of GEMINI_HISTORY) assert.ok(!left.includes(name), name);
    } finally {
      await stub.vendor.close();
    }
  },
});
