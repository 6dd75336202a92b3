import assert from "node:assert/strict";
import { claudeAdapter, createClaudeParser } from "../../../src/agents/cli/claude.ts";
import { promptText } from "../../../src/agents/prompt_text.ts";
import { stdinFor } from "../../../src/agents/cli/attachment_files.ts";
import type { ParsedLine, StructuredPrompt } from "../../../src/agents/types.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";

// Samples in the shapes `claude -p --output-format stream-json --verbose` prints (our own text).
const SESSION = { session_id: "s-1", uuid: "u" };
const init = {
  type: "system",
  subtype: "init",
  cwd: "/work/proj",
  tools: ["Bash", "Read"],
  model: "claude-opus-4-8[1m]",
  ...SESSION,
};
const streamEvent = (event: unknown, parent: string | null = null) => ({
  type: "stream_event",
  event,
  parent_tool_use_id: parent,
  ...SESSION,
});
const messageStart = (id: string, input: number) =>
  streamEvent({
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      content: [],
      usage: { input_tokens: input, output_tokens: 1, cache_read_input_tokens: 5 },
    },
  });
const textStart = (index: number) =>
  streamEvent({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
const textDelta = (index: number, text: string) =>
  streamEvent({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
const thinkingDelta = streamEvent({
  type: "content_block_delta",
  index: 0,
  delta: { type: "thinking_delta", thinking: "pondering" },
});
const messageDelta = (output: number) =>
  streamEvent({
    type: "message_delta",
    delta: { stop_reason: "end_turn" },
    usage: { input_tokens: 10, output_tokens: output },
  });
const assistant = (id: string, block: unknown, parent: string | null = null, model = "m") => ({
  type: "assistant",
  message: { id, type: "message", role: "assistant", model, content: [block], stop_reason: null },
  parent_tool_use_id: parent,
  ...SESSION,
});
const result = (fields: Record<string, unknown>) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  result: "Final answer.",
  total_cost_usd: 0.0123,
  usage: {
    input_tokens: 100,
    cache_creation_input_tokens: 20,
    cache_read_input_tokens: 30,
    output_tokens: 40,
  },
  ...SESSION,
  ...fields,
});

function parseAll(lines: unknown[], cwd?: string): ParsedLine[] {
  const parse = createClaudeParser({ cwd });
  return lines.flatMap((line) => parse(typeof line === "string" ? line : JSON.stringify(line)));
}

const texts = (parsed: ParsedLine[]) =>
  parsed.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
const activities = (parsed: ParsedLine[]) =>
  parsed.flatMap((p) => (p.type === "activity" ? [p.text] : []));

Deno.test("claude parser: live text comes from text deltas, not repeated from assistant blocks", () => {
  const parsed = parseAll([
    init,
    messageStart("msg_1", 12),
    thinkingDelta,
    textStart(1),
    textDelta(1, "Hello "),
    textDelta(1, "world"),
    assistant("msg_1", { type: "text", text: "Hello world" }),
    messageDelta(6),
    result({ result: "Hello world" }),
  ]);
  assert.equal(texts(parsed), "Hello world");
  const final = parsed.find((p) => p.type === "final");
  assert.deepEqual(final, { type: "final", text: "Hello world", error: undefined });
});

Deno.test("claude parser: without deltas the assistant text blocks are the text", () => {
  const parsed = parseAll([
    init,
    assistant("msg_1", { type: "text", text: "I will read the file." }),
    assistant("msg_1", {
      type: "tool_use",
      id: "t1",
      name: "Read",
      input: { file_path: "/work/proj/notes.txt" },
    }),
    assistant("msg_2", { type: "text", text: "It says hi." }),
    result({ result: "It says hi." }),
  ], "/work/proj");
  assert.equal(texts(parsed), "I will read the file.\n\nIt says hi.");
  assert.deepEqual(activities(parsed), ["Read notes.txt"]);
  assert.equal(parsed.findLast((p) => p.type === "final")?.type, "final");
});

Deno.test("claude parser: a second text block after a tool call is separated by a blank line", () => {
  const parsed = parseAll([
    messageStart("msg_1", 10),
    textStart(0),
    textDelta(0, "Looking."),
    assistant("msg_1", { type: "tool_use", id: "t", name: "Bash", input: { command: "ls -la" } }),
    messageStart("msg_2", 20),
    textStart(0),
    textDelta(0, "Done."),
  ]);
  assert.equal(texts(parsed), "Looking.\n\nDone.");
  assert.deepEqual(activities(parsed), ["$ ls -la"]);
});

Deno.test("claude parser: subagent lines add activity but no text", () => {
  const parsed = parseAll([
    assistant("msg_1", {
      type: "tool_use",
      id: "t",
      name: "Agent",
      input: { description: "Find notes", subagent_type: "Explore" },
    }),
    assistant("sub_1", { type: "text", text: "subagent says" }, "t"),
    assistant(
      "sub_1",
      { type: "tool_use", id: "t2", name: "Grep", input: { pattern: "TODO" } },
      "t",
    ),
    streamEvent({ type: "content_block_delta", delta: { type: "text_delta", text: "x" } }, "t"),
  ]);
  assert.equal(texts(parsed), "");
  assert.deepEqual(activities(parsed), ["Agent: Find notes", "Grep TODO"]);
});

Deno.test("claude parser: running usage sums messages; result usage includes cache tokens and cost", () => {
  const parse = createClaudeParser();
  const usageOf = (line: unknown) => parse(JSON.stringify(line)).find((p) => p.type === "usage");
  assert.deepEqual(usageOf(messageStart("a", 12)), {
    type: "usage",
    inputTokens: 17,
    outputTokens: 1,
  });
  assert.deepEqual(usageOf(messageDelta(6)), { type: "usage", inputTokens: 17, outputTokens: 6 });
  assert.deepEqual(usageOf(messageStart("b", 3)), {
    type: "usage",
    inputTokens: 25,
    outputTokens: 7,
  });
  assert.deepEqual(usageOf(result({})), {
    type: "usage",
    inputTokens: 150,
    outputTokens: 40,
    costUsd: 0.0123,
    cacheReadTokens: 30,
    cacheWriteTokens: 20,
  });
});

Deno.test("claude parser: is_error result and error subtypes become final errors", () => {
  const overloaded = parseAll([
    { type: "system", subtype: "api_retry", attempt: 1, max_retries: 2, error_status: 529 },
    assistant("x", { type: "text", text: "API Error: 529 overloaded" }, null, "<synthetic>"),
    result({ is_error: true, result: "API Error: 529 overloaded", total_cost_usd: 0 }),
  ]);
  assert.deepEqual(overloaded.filter((p) => p.type === "retry"), [
    { type: "retry", attempt: 1, maxAttempts: 2, reason: "529" },
  ]);
  assert.deepEqual(activities(overloaded), []);
  assert.equal(texts(overloaded), "", "the CLI's own error note is not answer text");
  const final = overloaded.find((p) => p.type === "final");
  assert.equal(final?.type === "final" && final.error, "API Error: 529 overloaded");

  const maxTurns = parseAll([
    result({ subtype: "error_max_turns", result: undefined, errors: ["hit the limit"] }),
  ]);
  const f2 = maxTurns.find((p) => p.type === "final");
  assert.equal(f2?.type === "final" && f2.error, "error_max_turns: hit the limit");
});

Deno.test("claude parser: non-JSON lines are reported invalid, blank lines ignored", () => {
  const parse = createClaudeParser();
  assert.deepEqual(parse("Warning: something"), [{ type: "invalid", line: "Warning: something" }]);
  assert.deepEqual(parse("{not json"), [{ type: "invalid", line: "{not json" }]);
  assert.deepEqual(parse("   "), []);
  assert.deepEqual(parse(JSON.stringify({ type: "rate_limit_event" })), []);
});

const agent = (args: string[] = []): AgentConfig => ({
  name: "claude",
  runner: "claude",
  model: "opus",
  args,
  env: {},
  timeoutMs: 1000,
});

Deno.test("claude argv: stream-json with --verbose and partial messages, full-auto, model", () => {
  const argv = claudeAdapter.argv(agent(["--max-turns", "5"]), { role: "child", model: "sonnet" });
  assert.deepEqual(argv.slice(0, 7), [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--model",
    "sonnet",
  ]);
  assert.ok(argv.includes("--dangerously-skip-permissions"));
  assert.deepEqual(argv.slice(-2), ["--max-turns", "5"]);
  assert.ok(!argv.includes("--tools"), "children keep their tools");
});

Deno.test("claude argv: a configured permission mode replaces full-auto; the judge gets no tools", () => {
  const argv = claudeAdapter.argv(agent(["--permission-mode", "plan"]), {
    role: "judge",
    model: "haiku",
  });
  assert.ok(!argv.includes("--dangerously-skip-permissions"));
  const tools = argv.indexOf("--tools");
  assert.equal(argv[tools + 1], "");
});

Deno.test("claude argv: the read-only judge has no tools and no MCP servers, so no plan mode (it would run haiku as Sonnet)", () => {
  const judge = claudeAdapter.argv(agent(), { role: "judge", model: "haiku", access: "read-only" });
  assert.equal(judge[judge.indexOf("--tools") + 1], "");
  assert.ok(judge.includes("--strict-mcp-config"));
  assert.ok(!judge.includes("--permission-mode"), judge.join(" "));
  assert.ok(!judge.includes("--dangerously-skip-permissions"));
  // A judge given tools or MCP servers of its own is confined as every read-only run is.
  for (const own of [["--tools", "Read"], ["--mcp-config", "/x.json"]]) {
    const argv = claudeAdapter.argv(agent(own), {
      role: "judge",
      model: "haiku",
      access: "read-only",
    });
    assert.equal(argv[argv.indexOf("--permission-mode") + 1], "plan", own.join(" "));
  }
});

Deno.test("claude env: IS_SANDBOX=1 only when running as root", () => {
  assert.deepEqual(claudeAdapter.env?.({ isRoot: true }), { IS_SANDBOX: "1" });
  assert.deepEqual(claudeAdapter.env?.({ isRoot: false }), {});
});

Deno.test("claude argv: read-only access is plan mode, whatever permission args the agent has", () => {
  const argv = claudeAdapter.argv(
    agent(["--dangerously-skip-permissions", "--permission-mode=acceptEdits", "--max-turns", "5"]),
    { role: "child", model: "opus", access: "read-only" },
  );
  assert.deepEqual(argv.filter((a) => a.includes("permission")), ["--permission-mode"]);
  assert.equal(argv[argv.indexOf("--permission-mode") + 1], "plan");
  assert.deepEqual(argv.slice(-2), ["--max-turns", "5"], "other args are kept");
  const writable = claudeAdapter.argv(agent(), {
    role: "child",
    model: "opus",
    access: "workspace-write",
  });
  assert.ok(writable.includes("--dangerously-skip-permissions"));
  assert.ok(!writable.includes("--permission-mode"));
});

const structured: StructuredPrompt = {
  preamble: [{ title: "Instructions the assistant is operating under", body: "Be careful." }],
  conversationTitle: "Conversation so far (oldest first)",
  conversation: [
    { role: "user", tag: "user", text: "Fix the parser." },
    {
      role: "assistant",
      tag: "assistant called tool Read (call t1)",
      text: '{"file_path":"a.ts"}',
    },
    { role: "user", tag: "result of call t1", text: "1\tconst a = 1;" },
  ],
  request: [{ title: "Your task", body: "Propose the next step." }],
};

Deno.test("claude stdin: a stream-json user message, one block per entry, a breakpoint after the last", () => {
  const argv = claudeAdapter.argv(agent(), { role: "child", model: "sonnet" });
  assert.deepEqual(argv.slice(argv.indexOf("--input-format"), argv.indexOf("--input-format") + 2), [
    "--input-format",
    "stream-json",
  ]);
  const line = claudeAdapter.structuredStdin!(agent(), structured, undefined)!;
  assert.ok(line.endsWith("}\n") && !line.slice(0, -1).includes("\n"), "one JSON line");
  const message = JSON.parse(line);
  assert.equal(message.type, "user");
  assert.equal(message.message.role, "user");
  const blocks = message.message.content as { text: string; cache_control?: unknown }[];
  assert.equal(blocks.length, 5, "head, three entries, request");
  assert.match(blocks[0].text, /Be careful\.\n\n=== Conversation so far \(oldest first\) ===\n$/);
  assert.equal(blocks[1].text, "[user]\nFix the parser.\n\n");
  assert.equal(blocks[3].text, "[result of call t1]\n1\tconst a = 1;\n\n");
  assert.deepEqual(blocks.map((b) => b.cache_control !== undefined), [
    false,
    false,
    false,
    true,
    false,
  ]);
  assert.match(blocks[4].text, /^=== Your task ===\nPropose the next step\./);
  // An entry's block is the same text when it is no longer the last one.
  const later = {
    ...structured,
    conversation: [...structured.conversation, structured.conversation[0]],
  };
  const again =
    JSON.parse(claudeAdapter.structuredStdin!(agent(), later, undefined)!).message.content;
  assert.deepEqual(
    again.slice(0, 4).map((b: { text: string }) => b.text),
    blocks.slice(0, 4).map((b) => b.text),
  );
});

Deno.test("claude stdin: a text prompt is one block; a configured text input format gets text", () => {
  const one =
    JSON.parse(claudeAdapter.structuredStdin!(agent(), "Say hi", undefined)!).message.content;
  assert.deepEqual(one, [{ type: "text", text: "Say hi" }]);
  const text = agent(["--input-format", "text"]);
  const argv = claudeAdapter.argv(text, { role: "child", model: "opus" });
  assert.equal(argv.filter((a) => a === "--input-format").length, 1, "the user's own flag only");
  assert.equal(argv[argv.indexOf("--input-format") + 1], "text");
  assert.equal(claudeAdapter.structuredStdin!(text, structured, undefined), undefined);
  assert.equal(stdinFor(claudeAdapter, text, structured, undefined), promptText(structured));
});
