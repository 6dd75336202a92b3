import assert from "node:assert/strict";
import { commandAdapter } from "../../../src/agents/cli/plain_command.ts";
import { HTTP_ADAPTERS } from "../../../src/agents/adapters.ts";
import { CLI_ADAPTERS } from "../../../src/agents/cli/runners.ts";
import { CLI_RUNNERS, HTTP_RUNNERS } from "../../../src/config/mod.ts";

Deno.test("command argv: args as configured with every {model} substituted", () => {
  const argv = commandAdapter.argv({
    name: "ollama",
    runner: "command",
    model: "llama3",
    command: "ollama",
    args: ["run", "{model}", "--tag={model}"],
    env: {},
    timeoutMs: 1,
  }, { role: "child", model: "qwen3" });
  assert.deepEqual(argv, ["run", "qwen3", "--tag=qwen3"]);
});

Deno.test("command parser: every stdout chunk is text as is", () => {
  const parse = commandAdapter.createParser();
  assert.deepEqual(parse("Hello, "), [{ type: "text", text: "Hello, " }]);
  assert.deepEqual(parse("{not json}\n"), [{ type: "text", text: "{not json}\n" }]);
  assert.deepEqual(parse(""), []);
  assert.equal(commandAdapter.stdout, "text");
  assert.equal(commandAdapter.defaultCommand, "", "a command agent must name its executable");
});

Deno.test("adapters: every configured runner has one", () => {
  for (const runner of CLI_RUNNERS) assert.ok(CLI_ADAPTERS[runner], runner);
  for (const runner of HTTP_RUNNERS) assert.ok(HTTP_ADAPTERS[runner], runner);
  assert.equal(CLI_ADAPTERS.claude.defaultCommand, "claude");
  assert.equal(CLI_ADAPTERS.codex.defaultCommand, "codex");
  assert.equal(CLI_ADAPTERS.gemini.defaultCommand, "gemini");
  assert.equal(CLI_ADAPTERS.opencode.defaultCommand, "opencode");
});
