/** OpenCode's adapter: argv, read-only permissions, and its parser over recorded real output. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  createOpencodeParser,
  opencodeAdapter,
  READ_ONLY_PERMISSION,
} from "../../../src/agents/cli/opencode.ts";
import type { ParsedLine } from "../../../src/agents/types.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";
import type { LabelledAttachment } from "../../../src/base/attachment.ts";
import { discoverAgents } from "../../../src/agents/cli/runners.ts";
import { envOf, tempDir, writeScript } from "../../support/temp_scripts.ts";
import { testRunner } from "../../support/agent_runner.ts";

/** Recorded from `opencode run --format json` 1.18.33 against a local stub (ids shortened). */
function recorded(name: string): string[] {
  const path = fileURLToPath(new URL(`../../fixtures/opencode/${name}`, import.meta.url));
  return Deno.readTextFileSync(path).split("\n");
}

function parseAll(lines: string[], cwd?: string): ParsedLine[] {
  const parse = createOpencodeParser({ cwd });
  return lines.flatMap((line) => parse(line));
}

const agent: AgentConfig = {
  name: "opencode",
  runner: "opencode",
  model: "stub/m1",
  args: [],
  env: {},
  timeoutMs: 1000,
};

Deno.test("opencode parser: a tool use, then the answer after it, with the steps' usage summed", () => {
  assert.deepEqual(parseAll(recorded("tool_then_answer.jsonl"), "/work/project"), [
    { type: "text", text: "Looking at the notes." },
    { type: "activity", text: "Read notes.txt" },
    { type: "usage", inputTokens: 50, outputTokens: 8, cacheReadTokens: 0, cacheWriteTokens: 0 },
    { type: "text", text: "\n\nThe notes say plums." },
    // Its input leaves out cache reads; ours counts them in.
    {
      type: "usage",
      inputTokens: 120,
      outputTokens: 13,
      cacheReadTokens: 20,
      cacheWriteTokens: 0,
    },
    { type: "final", text: "The notes say plums." },
  ]);
});

Deno.test("opencode parser: an API error event is the run's error, also after silent retries", () => {
  assert.deepEqual(parseAll(recorded("api_error.jsonl")), [
    { type: "final", error: "model stub refuses this" },
  ]);
  // A 503 it retried five times (printing nothing) before it gave up.
  assert.deepEqual(parseAll(recorded("gave_up_retrying.jsonl")), [
    { type: "final", error: "stub overloaded" },
  ]);
});

Deno.test("opencode parser: reported cost and cache writes are kept; other lines are counted", () => {
  const parse = createOpencodeParser();
  const finish = {
    type: "step_finish",
    part: {
      type: "step-finish",
      reason: "stop",
      tokens: { input: 10, output: 2, reasoning: 3, cache: { write: 40, read: 0 } },
      cost: 0.0125,
    },
  };
  assert.deepEqual(parse(JSON.stringify(finish)), [
    {
      type: "usage",
      inputTokens: 50,
      outputTokens: 5,
      costUsd: 0.0125,
      cacheReadTokens: 0,
      cacheWriteTokens: 40,
    },
    { type: "final", text: "" },
  ]);
  assert.deepEqual(parse("not json"), [{ type: "invalid", line: "not json" }]);
  assert.deepEqual(parse(""), []);
});

Deno.test("opencode argv: json events, a title of its own, the model, full-auto", () => {
  const argv = opencodeAdapter.argv(agent, { role: "child", model: "stub/m1" });
  assert.deepEqual(argv, [
    "run",
    "--format",
    "json",
    "--title",
    "council",
    "--model",
    "stub/m1",
    "--auto",
  ]);
  // "default" leaves the model to the user's own OpenCode configuration.
  const own = opencodeAdapter.argv(agent, { role: "child", model: "default" });
  assert.ok(!own.includes("--model"), own.join(" "));
  // No message argument: the prompt goes on stdin, however long.
  assert.ok(!argv.some((arg) => /\s/.test(arg)));
});

Deno.test("opencode argv: images go as --file=, one flag each, and the prompt names them", () => {
  const image: LabelledAttachment = {
    label: "image #1",
    kind: "image",
    mediaType: "image/png",
    source: { type: "base64", data: "AA==" },
  };
  const delivery = {
    attachments: [image],
    files: new Map([["image #1", "/tmp/files/image-1.png"]]),
    dir: "/tmp/files",
  };
  const argv = opencodeAdapter.argv(agent, { role: "child", model: "stub/m1", delivery });
  assert.ok(argv.includes("--file=/tmp/files/image-1.png"), argv.join(" "));
  const stdin = opencodeAdapter.stdin!("Describe it.", delivery);
  assert.match(
    stdin,
    /^Describe it\.\n\nThe images attached to this message: image-1\.png is image #1\.$/,
  );
});

Deno.test("opencode env: read-only denies edits, the shell and subagents; no session is kept", () => {
  const readOnly = opencodeAdapter.env!({ isRoot: false, access: "read-only" });
  assert.deepEqual(JSON.parse(readOnly.OPENCODE_PERMISSION), READ_ONLY_PERMISSION);
  assert.deepEqual(READ_ONLY_PERMISSION, { edit: "deny", bash: "deny", task: "deny" });
  assert.equal(readOnly.OPENCODE_DB, ":memory:");
  const writing = opencodeAdapter.env!({ isRoot: false, access: "workspace-write" });
  assert.equal(writing.OPENCODE_PERMISSION, undefined);
  assert.equal(opencodeAdapter.env!({ isRoot: false }).OPENCODE_PERMISSION, undefined);
});

Deno.test("opencode discovery: on PATH, it joins with OpenCode's own model, after the others", async () => {
  await using dir = await tempDir();
  await writeScript(dir.path, "opencode", "exit 0");
  await writeScript(dir.path, "codex", "exit 0");
  const found = discoverAgents(envOf({ PATH: dir.path }));
  assert.deepEqual(found.map((a) => [a.runner, a.model]), [["codex", "gpt-5.5"], [
    "opencode",
    "default",
  ]]);
});

Deno.test("opencode: its error event ends the run at once, though the CLI does not exit after it", async () => {
  await using dir = await tempDir();
  const line = JSON.stringify({
    type: "error",
    error: { name: "APIError", data: { message: "stub overloaded", statusCode: 503 } },
  });
  // As OpenCode did against a failing model: the error event, then no exit.
  const command = await writeScript(
    dir.path,
    "opencode",
    `cat >/dev/null\necho '${line}'\nsleep 30`,
  );
  const agent = {
    name: "opencode",
    runner: "opencode",
    model: "default",
    command,
    args: [],
    env: {},
    timeoutMs: 20_000,
  } as AgentConfig;
  const started = performance.now();
  const result = await testRunner()(agent, "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.match(result.error ?? "", /stub overloaded/);
  assert.ok(performance.now() - started < 10_000, "ended on the event, not at the time-out");
});
