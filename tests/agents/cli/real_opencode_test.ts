/**
 * Runs the REAL `opencode` CLI as a council child against the fake vendor API's Chat Completions
 * (a custom provider in its config): the prompt arrives on stdin however long, its tool use and
 * answer are read from its JSON events, its token counts add up, an image attachment reaches the
 * model, read-only takes its write and shell tools away, and no session is left in its database.
 * Skipped, with a visible reason, when the CLI is not installed (see real_claude_test.ts for where
 * the real CLIs live).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentEvent } from "../../../src/agents/types.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";
import { labelAttachments } from "../../../src/base/attachment.ts";
import { PNG_4X3 } from "../../fixtures/images.ts";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";
import { type FakeVendor, startFakeVendor } from "../../support/fake_vendor/mod.ts";

const opencode = findTestCli("opencode", /^\d+\.\d+/);
if (!opencode.path) console.log(`real_opencode_test: skipped: ${opencode.reason}`);

interface ChatBody {
  messages: { role: string; content: unknown }[];
  tools?: { function: { name: string } }[];
}

const chats = (vendor: FakeVendor) => vendor.requests.filter((r) => r.api === "chat");
const toolNames = (body: unknown) =>
  ((body as ChatBody).tools ?? []).map((tool) => tool.function.name).sort();
const afterToolResult = (body: unknown) => (body as ChatBody).messages.at(-1)?.role === "tool";

/** The fake vendor: a request without a tool result calls `tool`, the one after it gets `answer`. */
function startModel(tool: string, input: Record<string, unknown>, answer: string): FakeVendor {
  return startFakeVendor()
    .on({ api: "chat", when: (r) => !afterToolResult(r.body) }, {
      parts: [{ text: "Checking first." }, { tool: { name: tool, input } }],
    })
    .on({ api: "chat" }, { text: answer });
}

/** A home whose OpenCode config has the fake vendor as a custom OpenAI-compatible provider. */
async function homeFor(root: string, vendor: FakeVendor): Promise<string> {
  const home = join(root, "home");
  await Deno.mkdir(join(home, ".config", "opencode"), { recursive: true });
  const config = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    provider: {
      stub: {
        npm: "@ai-sdk/openai-compatible",
        name: "Stub",
        options: { baseURL: `${vendor.origin}/v1`, apiKey: "{env:STUB_API_KEY}" },
        // Declared to take images: OpenCode drops image parts for a model that does not.
        models: {
          m1: {
            name: "Stub model",
            attachment: true,
            modalities: { input: ["text", "image"], output: ["text"] },
          },
        },
      },
    },
  };
  await Deno.writeTextFile(
    join(home, ".config", "opencode", "opencode.json"),
    JSON.stringify(config),
  );
  return home;
}

function agentFor(home: string, args: string[] = []): AgentConfig {
  return {
    name: "opencode",
    runner: "opencode",
    model: "stub/m1",
    command: opencode.path,
    args,
    // No network here: it would wait for its models list from the internet.
    env: { HOME: home, STUB_API_KEY: "test-key", OPENCODE_DISABLE_MODELS_FETCH: "1" },
    timeoutMs: 150_000,
  };
}

Deno.test({
  name: "real opencode: a long prompt on stdin, a tool use, the answer; no session is kept",
  ignore: !opencode.path,
  async fn() {
    await using scope = await tempDir("council-opencode-");
    const project = join(scope.path, "project");
    await Deno.mkdir(project);
    await Deno.writeTextFile(join(project, "notes.txt"), "plums are ripe\n");
    await using vendor = startModel("read", { filePath: join(project, "notes.txt") }, "Plums.");
    const home = await homeFor(scope.path, vendor);
    // Longer than one argv string may be (128 KiB): only stdin can carry it.
    const prompt = `What do the notes say?\n${"filler words ".repeat(16_000)}\nEnd of task.`;
    const events: AgentEvent[] = [];
    const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
      agentFor(home),
      prompt,
      { role: "child", cwd: project, onEvent: (event) => events.push(event) },
    );
    assert.equal(result.ok, true, result.error);
    assert.equal(result.text, "Plums.");
    assert.ok(
      events.some((e) => e.type === "activity" && e.text === "Read notes.txt"),
      JSON.stringify(events.filter((e) => e.type === "activity")),
    );
    // The fake vendor's counts (the second request reads the first one's prompt from its
    // cache), as OpenCode reported them step by step and the parser summed them.
    const sum = (key: "total" | "read") => chats(vendor).reduce((n, r) => n + r.cache[key], 0);
    assert.equal(result.usage.inputTokens, sum("total"), JSON.stringify(result.usage));
    assert.equal(result.usage.cacheReadTokens, sum("read"));
    assert.ok(sum("read") > 0 && result.usage.outputTokens > 0, JSON.stringify(result.usage));
    const first = chats(vendor)[0];
    const user = (first?.body as ChatBody).messages.find((m) => m.role === "user");
    assert.ok(JSON.stringify(user?.content).includes("End of task."), "the whole prompt arrived");
    assert.equal(first?.headers.get("authorization"), "Bearer test-key");
    // Full-auto: its write and shell tools are offered.
    assert.ok(toolNames(first.body).includes("bash"), toolNames(first.body).join(", "));
    const data = join(home, ".local", "share", "opencode");
    const kept = [...Deno.readDirSync(data)].map((entry) => entry.name);
    assert.ok(!kept.some((name) => name.startsWith("opencode.db")), kept.join(", "));
  },
});

Deno.test({
  name: "real opencode: an image attachment reaches the model with the prompt from stdin",
  ignore: !opencode.path,
  async fn() {
    await using scope = await tempDir("council-opencode-");
    const project = join(scope.path, "project");
    await Deno.mkdir(project);
    await using vendor = startFakeVendor({ answer: { text: "A red square." } });
    const home = await homeFor(scope.path, vendor);
    const attachments = labelAttachments([
      { kind: "image", mediaType: "image/png", source: { type: "base64", data: PNG_4X3 } },
    ]);
    const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
      agentFor(home),
      "What does [image #1: image/png] show?",
      { role: "child", cwd: project, attachments },
    );
    assert.equal(result.ok, true, result.error);
    assert.equal(result.text, "A red square.");
    const user = (chats(vendor)[0].body as ChatBody).messages.find((m) => m.role === "user");
    const parts = JSON.stringify(user?.content);
    assert.ok(parts.includes(`data:image/png;base64,${PNG_4X3}`), parts.slice(0, 400));
    assert.ok(parts.includes("What does [image #1: image/png] show?"), parts.slice(0, 400));
  },
});

Deno.test({
  name: "real opencode: read-only offers no write, edit or shell tool, even with --auto",
  ignore: !opencode.path,
  async fn() {
    await using scope = await tempDir("council-opencode-");
    const project = join(scope.path, "project");
    await Deno.mkdir(project);
    const target = join(project, "written.txt");
    await using vendor = startModel("write", { filePath: target, content: "x" }, "Could not.");
    const home = await homeFor(scope.path, vendor);
    const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
      agentFor(home, ["--auto"]),
      "Write the file.",
      { role: "child", cwd: project, access: "read-only" },
    );
    assert.equal(result.ok, true, result.error);
    const tools = toolNames(chats(vendor)[0].body);
    assert.ok(tools.includes("read"), tools.join(", "));
    for (const tool of ["bash", "edit", "write", "task"]) {
      assert.ok(!tools.includes(tool), `${tool} offered: ${tools.join(", ")}`);
    }
    await assert.rejects(Deno.lstat(target), Deno.errors.NotFound);
  },
});
