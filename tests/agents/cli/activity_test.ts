import assert from "node:assert/strict";
import {
  describeToolCall,
  parseJsonLine,
  shortPath,
  unwrapShell,
} from "../../../src/agents/cli/activity.ts";
import { oneLine } from "../../../src/base/text.ts";

Deno.test("describeToolCall: common tools of claude and gemini read as short actions", () => {
  const cwd = "/home/u/proj";
  assert.equal(
    describeToolCall("Read", { file_path: "/home/u/proj/notes.txt" }, cwd),
    "Read notes.txt",
  );
  assert.equal(describeToolCall("Read", { file_path: "/etc/hosts" }, cwd), "Read /etc/hosts");
  assert.equal(describeToolCall("Bash", { command: "ls -la" }), "$ ls -la");
  assert.equal(describeToolCall("run_shell_command", { command: "git status" }), "$ git status");
  assert.equal(
    describeToolCall("Edit", { file_path: "/home/u/proj/src/a.ts" }, cwd),
    "Edit src/a.ts",
  );
  assert.equal(describeToolCall("write_file", { file_path: "out.md" }), "Write out.md");
  assert.equal(describeToolCall("Grep", { pattern: "TODO" }), "Grep TODO");
  assert.equal(describeToolCall("glob", { pattern: "**/*.ts" }), "Glob **/*.ts");
  assert.equal(describeToolCall("WebFetch", { url: "https://x.dev" }), "Fetch https://x.dev");
  assert.equal(describeToolCall("Task", { description: "Find notes" }), "Agent: Find notes");
  assert.equal(describeToolCall("mcp__srv__go", { target: "here" }), "mcp__srv__go here");
  assert.equal(describeToolCall("TodoWrite", { todos: [] }), "TodoWrite");
});

Deno.test("describeToolCall: multi-line commands become one bounded line", () => {
  const text = describeToolCall("Bash", { command: `echo a\n${"x".repeat(300)}` });
  assert.ok(!text.includes("\n"));
  assert.ok(text.length <= 120);
  assert.ok(text.startsWith("$ echo a x"));
});

Deno.test("unwrapShell: codex's login-shell wrapper is removed", () => {
  assert.equal(unwrapShell("/bin/bash -lc 'head -n 1 notes.txt'"), "head -n 1 notes.txt");
  assert.equal(unwrapShell(`bash -lc "ls"`), "ls");
  assert.equal(unwrapShell(`/bin/zsh -lc 'echo '\\''hi'\\'''`), "echo 'hi'");
  assert.equal(unwrapShell("ls -la"), "ls -la");
});

Deno.test("shortPath and oneLine", () => {
  assert.equal(shortPath("/a/b/c.txt", "/a"), "b/c.txt");
  assert.equal(shortPath("/a/b/c.txt", "/a/"), "b/c.txt");
  assert.equal(shortPath("/ab/c.txt", "/a"), "/ab/c.txt");
  assert.equal(shortPath("/a", "/a"), "/a");
  assert.equal(oneLine("  a\n\tb  "), "a b");
  assert.equal(oneLine("abcdef", 4), "abc…");
});

Deno.test("parseJsonLine: objects, blanks, and everything else", () => {
  assert.deepEqual(parseJsonLine('{"type":"x"}'), { type: "x" });
  assert.equal(parseJsonLine("  "), "blank");
  assert.equal(parseJsonLine("[1,2]"), "invalid");
  assert.equal(parseJsonLine('{"a":'), "invalid");
  assert.equal(parseJsonLine("null"), "invalid");
});
