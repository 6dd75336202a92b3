/**
 * Runs the REAL `opencode` CLI as a council child against a local Chat Completions stub (a custom
 * provider in its config): the prompt arrives on stdin however long, its tool use and answer are
 * read from its JSON events, an image attachment reaches the model, read-only takes its write and
 * shell tools away, and no session is left in its database. Skipped, with a visible reason, when the CLI is not installed (see
 * real_claude_test.ts for where the real CLIs live).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentEvent } from "../../../src/agents/types.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";
import { labelAttachments } from "../../../src/base/attachment.ts";
import { PNG_4X3 } from "../../fixtures/images.ts";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";
import {
  frame,
  openaiFrames,
  type SeenRequest,
  sseResponse,
  startStub,
  type Stub,
} from "../../support/model_api_stub.ts";

const opencode = findTestCli("opencode", /^\d+\.\d+/);
if (!opencode.path) console.log(`real_opencode_test: skipped: ${opencode.reason}`);

interface ChatBody {
  messages: { role: string; content: unknown }[];
  tools?: { function: { name: string } }[];
}

const toolNames = (request: SeenRequest) =>
  ((request.body as ChatBody).tools ?? []).map((tool) => tool.function.name).sort();

/** A stream whose one choice calls `tool` with `args`, after a line of narration. */
function toolCallFrames(tool: string, args: Record<string, unknown>): string[] {
  const chunk = (delta: unknown, finish: string | null) =>
    frame(undefined, {
      id: "chatcmpl-stub",
      object: "chat.completion.chunk",
      created: 1,
      model: "m1",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  return [
    chunk({ role: "assistant", content: "Checking first." }, null),
    chunk({
      tool_calls: [{
        index: 0,
        id: "call_1",
        type: "function",
        function: { name: tool, arguments: JSON.stringify(args) },
      }],
    }, null),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
}

/** The stub: the first request calls `tool`, the one after its result gets `answer`. */
function startModel(tool: string, args: Record<string, unknown>, answer: string): Stub {
  return startStub((request) => {
    if (!request.path.endsWith("/chat/completions")) return new Response("", { status: 404 });
    const { messages } = request.body as ChatBody;
    if (messages.at(-1)?.role !== "tool") return sseResponse(toolCallFrames(tool, args));
    return sseResponse(openaiFrames([answer], { input: 70, output: 5, cacheRead: 20 }));
  });
}

/** A home whose OpenCode config has the stub as a custom OpenAI-compatible provider. */
async function homeFor(root: string, stub: Stub): Promise<string> {
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
        options: { baseURL: `${stub.origin}/v1`, apiKey: "{env:STUB_API_KEY}" },
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
    await using stub = startModel("read", { filePath: join(project, "notes.txt") }, "Plums.");
    const home = await homeFor(scope.path, stub);
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
    // The stub's counts, as OpenCode reported them (its cost is 0: a model it has no price for).
    assert.deepEqual(
      [result.usage.inputTokens, result.usage.outputTokens, result.usage.cacheReadTokens],
      [70, 5, 20],
      JSON.stringify(result.usage),
    );
    const first = stub.requests.find((r) => r.path.endsWith("/chat/completions"));
    const user = (first?.body as ChatBody).messages.find((m) => m.role === "user");
    assert.ok(JSON.stringify(user?.content).includes("End of task."), "the whole prompt arrived");
    assert.equal(first?.headers.get("authorization"), "Bearer test-key");
    // Full-auto: its write and shell tools are offered.
    assert.ok(toolNames(first!).includes("bash"), toolNames(first!).join(", "));
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
    await using stub = startStub(() => sseResponse(openaiFrames(["A red square."], undefined)));
    const home = await homeFor(scope.path, stub);
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
    const user = (stub.requests[0].body as ChatBody).messages.find((m) => m.role === "user");
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
    await using stub = startModel("write", { filePath: target, content: "x" }, "Could not.");
    const home = await homeFor(scope.path, stub);
    const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
      agentFor(home, ["--auto"]),
      "Write the file.",
      { role: "child", cwd: project, access: "read-only" },
    );
    assert.equal(result.ok, true, result.error);
    const tools = toolNames(stub.requests[0]);
    assert.ok(tools.includes("read"), tools.join(", "));
    for (const tool of ["bash", "edit", "write", "task"]) {
      assert.ok(!tools.includes(tool), `${tool} offered: ${tools.join(", ")}`);
    }
    await assert.rejects(Deno.lstat(target), Deno.errors.NotFound);
  },
});
