import assert from "node:assert/strict";
import { childEnv } from "../../../src/agents/child_env.ts";
import { createGeminiParser, geminiAdapter } from "../../../src/agents/cli/gemini.ts";
import type { ParsedLine } from "../../../src/agents/types.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";

// Samples in the shapes `gemini --output-format stream-json` prints (our own text).
const ts = { timestamp: "2026-01-01T00:00:00.000Z" };
const stats = {
  total_tokens: 70,
  input_tokens: 60,
  output_tokens: 10,
  cached: 0,
  input: 60,
  duration_ms: 170,
  tool_calls: 1,
  models: { "gemini-stub": { total_tokens: 70, input_tokens: 60, output_tokens: 10 } },
};

function parseAll(lines: unknown[], cwd?: string): ParsedLine[] {
  const parse = createGeminiParser({ cwd });
  return lines.flatMap((line) => parse(JSON.stringify(line)));
}

Deno.test("gemini parser: assistant deltas are text, tool_use is activity, result has stats", () => {
  const parsed = parseAll([
    { type: "init", ...ts, session_id: "s", model: "gemini-2.5-flash" },
    { type: "message", ...ts, role: "user", content: "read notes.txt" },
    {
      type: "tool_use",
      ...ts,
      tool_name: "read_file",
      tool_id: "read_file_1",
      parameters: { file_path: "/w/notes.txt" },
    },
    { type: "tool_result", ...ts, tool_id: "read_file_1", status: "success", output: "" },
    {
      type: "tool_use",
      ...ts,
      tool_name: "run_shell_command",
      tool_id: "sh_1",
      parameters: { command: "ls -la" },
    },
    { type: "message", ...ts, role: "assistant", content: "The file ", delta: true },
    { type: "message", ...ts, role: "assistant", content: "says hi.", delta: true },
    { type: "result", ...ts, status: "success", stats },
  ], "/w");
  assert.deepEqual(parsed, [
    { type: "activity", text: "Read notes.txt" },
    { type: "activity", text: "$ ls -la" },
    { type: "text", text: "The file " },
    { type: "text", text: "says hi." },
    { type: "usage", inputTokens: 60, outputTokens: 10, cacheReadTokens: 0 },
    { type: "final", text: "The file says hi." },
  ]);
});

Deno.test("gemini parser: narration before a tool use is not the final answer, and is set apart", () => {
  const parsed = parseAll([
    { type: "message", ...ts, role: "assistant", content: "I will read ", delta: true },
    { type: "message", ...ts, role: "assistant", content: "the notes first.", delta: true },
    { type: "tool_use", ...ts, tool_name: "read_file", tool_id: "r1", parameters: {} },
    { type: "tool_result", ...ts, tool_id: "r1", status: "success", output: "" },
    { type: "message", ...ts, role: "assistant", content: "The notes ", delta: true },
    { type: "message", ...ts, role: "assistant", content: "say hi.", delta: true },
    { type: "result", ...ts, status: "success", stats },
  ]);
  const texts = parsed.flatMap((p) => (p.type === "text" ? [p.text] : []));
  assert.equal(texts.join(""), "I will read the notes first.\n\nThe notes say hi.");
  assert.deepEqual(parsed.at(-1), { type: "final", text: "The notes say hi." });
});

Deno.test("gemini parser: an error result is a final error; warnings are ignored", () => {
  const parsed = parseAll([
    { type: "error", ...ts, severity: "warning", message: "slow" },
    { type: "error", ...ts, severity: "error", message: "quota exceeded" },
    { type: "result", ...ts, status: "error", stats: {} },
  ]);
  assert.deepEqual(parsed, [{ type: "final", error: "quota exceeded" }]);
  const explicit = parseAll([
    {
      type: "result",
      ...ts,
      status: "error",
      error: { type: "Error", message: "Invalid auth method selected." },
    },
  ]);
  assert.deepEqual(explicit, [{ type: "final", error: "Invalid auth method selected." }]);
});

Deno.test("gemini parser: stderr-like noise on stdout is invalid", () => {
  const parse = createGeminiParser();
  assert.deepEqual(parse("Ripgrep is not available."), [
    { type: "invalid", line: "Ripgrep is not available." },
  ]);
});

Deno.test("gemini argv: stream-json, model, yolo approval, skip-trust", () => {
  const agent: AgentConfig = {
    name: "gemini",
    runner: "gemini",
    model: "gemini-2.5-pro",
    args: [],
    env: {},
    timeoutMs: 1,
  };
  assert.deepEqual(geminiAdapter.argv(agent, { role: "child", model: "gemini-2.5-flash" }), [
    "--output-format",
    "stream-json",
    "--model",
    "gemini-2.5-flash",
    "--approval-mode",
    "yolo",
    "--skip-trust",
  ]);
  const tightened = geminiAdapter.argv({ ...agent, args: ["--approval-mode", "default"] }, {
    role: "child",
    model: "m",
  });
  assert.equal(tightened.filter((a) => a === "--approval-mode").length, 1);
  assert.deepEqual(tightened.slice(-2), ["--approval-mode", "default"]);
});

Deno.test("gemini argv: read-only access is the default approval mode, whatever the args say", () => {
  const agent: AgentConfig = {
    name: "gemini",
    runner: "gemini",
    model: "gemini-2.5-pro",
    args: ["--yolo", "--approval-mode=auto_edit", "-y", "--approval-mode", "yolo", "--debug"],
    env: {},
    timeoutMs: 1,
  };
  const argv = geminiAdapter.argv(agent, { role: "child", model: "m", access: "read-only" });
  assert.deepEqual(argv.filter((a) => /approval|yolo|^-y$/.test(a)), ["--approval-mode"]);
  assert.equal(argv[argv.indexOf("--approval-mode") + 1], "default");
  assert.equal(argv.at(-1), "--debug");
  const writable = geminiAdapter.argv({ ...agent, args: [] }, { role: "child", model: "m" });
  assert.equal(writable[writable.indexOf("--approval-mode") + 1], "yolo");
});

Deno.test("gemini env: no self-relaunch (its start-up switch); an agent's env can undo it", () => {
  assert.deepEqual(geminiAdapter.env?.({ isRoot: false }), { GEMINI_CLI_NO_RELAUNCH: "true" });
  const env = childEnv({
    base: {},
    passApiKeys: false,
    selfOrigins: [],
    adapterEnv: geminiAdapter.env?.({ isRoot: false }),
    agentEnv: { GEMINI_CLI_NO_RELAUNCH: "" },
  });
  assert.equal(env.GEMINI_CLI_NO_RELAUNCH, "");
});

Deno.test("gemini env: its compiled bundle is cached between runs where the gateway gives a dir", () => {
  assert.deepEqual(geminiAdapter.env?.({ isRoot: false, nodeCompileCache: "/c/ncc" }), {
    GEMINI_CLI_NO_RELAUNCH: "true",
    NODE_COMPILE_CACHE: "/c/ncc",
  });
});
