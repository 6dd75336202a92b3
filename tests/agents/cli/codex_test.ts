import assert from "node:assert/strict";
import { codexAdapter, createCodexParser } from "../../../src/agents/cli/codex.ts";
import type { ParsedLine } from "../../../src/agents/types.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";

// Samples in the shapes `codex exec --json` prints (our own text).
const started = [{ type: "thread.started", thread_id: "t-1" }, { type: "turn.started" }];
const item = (event: string, fields: Record<string, unknown>) => ({ type: event, item: fields });
const command = (id: string, status: string) => ({
  id,
  type: "command_execution",
  command: "/bin/bash -lc 'head -n 1 notes.txt'",
  aggregated_output: status === "completed" ? "first line\n" : "",
  exit_code: status === "completed" ? 0 : null,
  status,
});
const message = (id: string, text: string) =>
  item("item.completed", { id, type: "agent_message", text });
const completed = {
  type: "turn.completed",
  usage: {
    input_tokens: 40,
    cached_input_tokens: 8,
    cache_write_input_tokens: 0,
    output_tokens: 14,
    reasoning_output_tokens: 4,
  },
};

function parseAll(lines: unknown[], cwd?: string): ParsedLine[] {
  const parse = createCodexParser({ cwd });
  return lines.flatMap((line) => parse(JSON.stringify(line)));
}
const texts = (parsed: ParsedLine[]) =>
  parsed.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
const activities = (parsed: ParsedLine[]) =>
  parsed.flatMap((p) => (p.type === "activity" ? [p.text] : []));

Deno.test("codex parser: agent_message is the text, commands and file changes are activity", () => {
  const parsed = parseAll([
    ...started,
    item("item.completed", { id: "item_0", type: "reasoning", text: "**Thinking**" }),
    item("item.started", command("item_1", "in_progress")),
    item("item.completed", command("item_1", "completed")),
    item("item.completed", {
      id: "item_2",
      type: "file_change",
      changes: [{ path: "/w/src/a.ts", kind: "update" }, { path: "/w/b.md", kind: "add" }],
      status: "completed",
    }),
    message("item_3", "The first line is: first line"),
    completed,
  ], "/w");
  assert.equal(texts(parsed), "The first line is: first line");
  assert.deepEqual(activities(parsed), ["$ head -n 1 notes.txt", "Edit src/a.ts", "Write b.md"]);
  assert.deepEqual(parsed.filter((p) => p.type === "usage"), [
    { type: "usage", inputTokens: 40, outputTokens: 14, cacheReadTokens: 8, cacheWriteTokens: 0 },
  ]);
  assert.deepEqual(parsed.at(-1), { type: "final", text: "The first line is: first line" });
});

Deno.test("codex parser: the last agent_message is the final text; each message streams once", () => {
  const parsed = parseAll([...started, message("a", "Looking."), message("b", "Done."), completed]);
  assert.equal(texts(parsed), "Looking.\n\nDone.");
  assert.deepEqual(parsed.at(-1), { type: "final", text: "Done." });
});

Deno.test("codex parser: retry notices and error items are ignored; repeats are not re-sent", () => {
  const parsed = parseAll([
    ...started,
    item("item.completed", { id: "e", type: "error", message: "Model metadata not found" }),
    message("item_0", "Hello"),
    { type: "error", message: "Reconnecting... 1/5 (stream disconnected)" },
    message("item_1", "Hello"),
    { type: "error", message: "stream disconnected before completion" },
    { type: "turn.failed", error: { message: "stream disconnected before completion" } },
  ]);
  assert.equal(texts(parsed), "Hello");
  assert.deepEqual(parsed.at(-1), {
    type: "final",
    text: "Hello",
    error: "stream disconnected before completion",
  });
});

Deno.test("codex parser: a command seen only at completion is still shown once", () => {
  const parsed = parseAll([item("item.completed", command("c", "completed"))]);
  assert.deepEqual(activities(parsed), ["$ head -n 1 notes.txt"]);
});

Deno.test("codex parser: a turn with no message ends with empty final text", () => {
  assert.deepEqual(parseAll([...started, completed]).at(-1), { type: "final", text: "" });
});

const agent = (args: string[] = []): AgentConfig => ({
  name: "codex",
  runner: "codex",
  model: "gpt-5.5",
  args,
  env: {},
  timeoutMs: 1000,
});

Deno.test("codex argv: exec --json, model, workspace sandbox, no session files, prompt from stdin last", () => {
  const argv = codexAdapter.argv(agent(["-c", "x=1"]), { role: "child", model: "gpt-5.5" });
  assert.deepEqual(argv, [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--model",
    "gpt-5.5",
    "--sandbox",
    "workspace-write",
    "--ephemeral",
    "-c",
    "analytics.enabled=false",
    "-c",
    "check_for_update_on_startup=false",
    "-c",
    "x=1",
    "-",
  ]);
});

Deno.test("codex argv: start-up switches unless the agent's args set the same keys", () => {
  const own = codexAdapter.argv(agent(["-c", "analytics.enabled=true"]), {
    role: "child",
    model: "m",
  });
  assert.equal(own.filter((a) => a.startsWith("analytics.enabled=")).length, 1);
  assert.ok(own.includes("analytics.enabled=true"));
  assert.ok(own.includes("check_for_update_on_startup=false"));
});

Deno.test("codex argv: the vendor provider is forced only when the user's default provider is the gateway", () => {
  // `connect codex` makes this gateway the user's default provider; a child must not use it.
  const pinned = codexAdapter.argv(agent([]), {
    role: "child",
    model: "m",
    providerIsGateway: true,
  });
  assert.equal(pinned[pinned.indexOf('model_provider="openai"') - 1], "-c");
  // Any other provider the user configured (Azure, a local server) is left alone.
  const users = codexAdapter.argv(agent([]), { role: "child", model: "m" });
  assert.ok(!users.some((a) => a.includes("model_provider")), users.join(" "));
  // The agent's own choice wins either way.
  const own = codexAdapter.argv(agent(["-c", "model_provider=azure"]), {
    role: "child",
    model: "m",
    providerIsGateway: true,
  });
  assert.ok(!own.includes('model_provider="openai"'));
  assert.equal(own.filter((a) => a.includes("model_provider=")).length, 1);
});

Deno.test("codex argv: a configured sandbox is not doubled", () => {
  const argv = codexAdapter.argv(agent(["--sandbox", "read-only"]), {
    role: "child",
    model: "m",
  });
  assert.equal(argv.filter((a) => a === "--sandbox").length, 1);
  assert.equal(argv[argv.indexOf("--sandbox") + 1], "read-only");
  assert.equal(argv.at(-1), "-");
});

Deno.test("codex argv: read-only access is the read-only sandbox, whatever the agent's args say", () => {
  for (
    const args of [
      ["--sandbox", "danger-full-access"],
      ["-s", "workspace-write"],
      ["--sandbox=workspace-write"],
      ["--dangerously-bypass-approvals-and-sandbox"],
      ["--full-auto"],
      [],
    ]
  ) {
    const argv = codexAdapter.argv(agent([...args, "-c", "x=1"]), {
      role: "child",
      model: "m",
      access: "read-only",
    });
    const sandbox = argv.flatMap((a, i) =>
      /sandbox|^-s$|full-auto/.test(a) ? [a, argv[i + 1]] : []
    );
    assert.deepEqual(sandbox, ["--sandbox", "read-only"], args.join(" "));
    assert.deepEqual(argv.slice(-3), ["-c", "x=1", "-"]);
  }
  const writable = codexAdapter.argv(agent([]), {
    role: "child",
    model: "m",
    access: "workspace-write",
  });
  assert.equal(writable[writable.indexOf("--sandbox") + 1], "workspace-write");
});
