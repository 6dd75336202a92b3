import assert from "node:assert/strict";
import {
  classifyAsk,
  findWorkingDirectory,
  newTurnRequest,
  recoverWorkingDirectory,
  sessionKeyOf,
  stripScaffolding,
} from "../../src/council/request.ts";
import type { TranscriptEntry } from "../../src/council/types.ts";

const user = (text: string): TranscriptEntry => ({ kind: "user", text });
const assistant = (text: string): TranscriptEntry => ({ kind: "assistant", text });

Deno.test("cwd: Claude Code main-agent environment block", () => {
  const system = "# Environment\nYou have been invoked in the following environment: \n" +
    " - Primary working directory: /home/dev/work/proj\n - Is a git repository: false\n";
  assert.equal(findWorkingDirectory(system), "/home/dev/work/proj");
  assert.equal(recoverWorkingDirectory(system, [], () => true), "/home/dev/work/proj");
});

Deno.test("cwd: Claude Code subagent <env> block and cwd: lines, case-insensitive", () => {
  assert.equal(
    findWorkingDirectory("<env>\nWorking directory: /srv/app\nIs directory a git repo: No\n</env>"),
    "/srv/app",
  );
  assert.equal(findWorkingDirectory("Context\nCWD: /tmp/x  \n"), "/tmp/x");
  assert.equal(findWorkingDirectory("call getcwd: /nope"), undefined);
});

Deno.test("cwd: Codex <environment_context> block in a user message", () => {
  const ctx = "<environment_context>\n  <cwd>/home/dev/work/codex</cwd>\n  <shell>bash</shell>\n" +
    "</environment_context>";
  const found = recoverWorkingDirectory("You are Codex.", [user(ctx), user("hi")], () => true);
  assert.equal(found, "/home/dev/work/codex");
});

Deno.test("cwd: only an existing absolute directory is used; later candidates are tried", () => {
  const system = "cwd: relative/path\nPrimary working directory: /does/not/exist\n" +
    "Working directory: /exists";
  assert.equal(recoverWorkingDirectory(system, [], (p) => p === "/exists"), "/exists");
  assert.equal(recoverWorkingDirectory(system, [], () => false), undefined);
});

Deno.test("cwd: real filesystem check, and tool results are not searched", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal(recoverWorkingDirectory(`cwd: ${dir}`, []), dir);
    assert.equal(recoverWorkingDirectory(`cwd: ${dir}/missing`, []), undefined);
    const fromTool = recoverWorkingDirectory("", [
      { kind: "tool_result", id: "t1", text: `cwd: ${dir}`, isError: false },
    ]);
    assert.equal(fromTool, undefined);
    const file = `${dir}/f.txt`;
    await Deno.writeTextFile(file, "x");
    assert.equal(recoverWorkingDirectory(`cwd: ${file}`, []), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ask: scaffolding stripped from the last user message", () => {
  const transcript = [
    user("first ask"),
    assistant("ok"),
    user("<system-reminder>\nToday is Tuesday.\n</system-reminder>\nRefactor the parser"),
  ];
  assert.equal(classifyAsk(transcript), "Refactor the parser");
  assert.equal(
    stripScaffolding(
      '<ide_opened_file path="a.ts">x</ide_opened_file><ide_selection>y</ide_selection>' +
        "<command-name>/review</command-name> go <user_instructions>u</user_instructions>",
    ),
    "go",
  );
});

Deno.test("ask: a message split into blocks is one message; raw text when nothing remains", () => {
  const split = [user("<system-reminder>date</system-reminder>"), user("say hi")];
  assert.equal(classifyAsk(split), "say hi");
  const onlyScaffold = [
    user("hello"),
    assistant("hi"),
    user("<system-reminder>r</system-reminder>"),
  ];
  assert.equal(classifyAsk(onlyScaffold), "<system-reminder>r</system-reminder>");
  assert.equal(classifyAsk([]), "");
});

Deno.test("ask: on a continuation the ask is the user's text, not the tool result", () => {
  const transcript: TranscriptEntry[] = [
    user("read notes.txt"),
    { kind: "tool_call", id: "t1", name: "Read", input: { file_path: "/x" } },
    { kind: "tool_result", id: "t1", text: "file body", isError: false },
  ];
  assert.equal(classifyAsk(transcript), "read notes.txt");
  // Claude Code may add a reminder next to the tool result: still not a new ask.
  const withReminder: TranscriptEntry[] = [
    ...transcript,
    user("<system-reminder>file changed</system-reminder>"),
  ];
  assert.equal(classifyAsk(withReminder), "read notes.txt");
  // A real message sent alongside the tool result is the ask.
  assert.equal(classifyAsk([...transcript, user("also check todo.md")]), "also check todo.md");
});

Deno.test("session key: stable across turns, distinct per conversation", async () => {
  const sys = "system prompt";
  const first = [user("<system-reminder>date</system-reminder>"), user("task A")];
  const k1 = await sessionKeyOf(sys, first);
  const k2 = await sessionKeyOf(sys, [...first, assistant("done"), user("now B")]);
  assert.equal(k1, k2);
  assert.match(k1, /^[0-9a-f]{64}$/);
  assert.notEqual(k1, await sessionKeyOf(sys, [user("<system-reminder>date</system-reminder>")]));
  assert.notEqual(k1, await sessionKeyOf("other system", first));
  // Codex: environment context and prompt are consecutive user messages; both key the session.
  const codexA = [user("<environment_context>c</environment_context>"), user("prompt A")];
  const codexB = [user("<environment_context>c</environment_context>"), user("prompt B")];
  assert.notEqual(await sessionKeyOf(sys, codexA), await sessionKeyOf(sys, codexB));
});

Deno.test("newTurnRequest derives id, cwd, ask and key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const req = await newTurnRequest({
      model: "opus",
      system: ` - Primary working directory: ${dir}`,
      transcript: [user("<system-reminder>r</system-reminder>fix it")],
      tools: [],
      continuation: false,
    });
    assert.equal(req.cwd, dir);
    assert.equal(req.ask, "fix it");
    assert.match(req.id, /^[0-9a-f]{8}$/);
    assert.equal(req.sessionKey.length, 64);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cwd: a `cwd:` / `working directory:` line in conversation text does not count", () => {
  const typed = [user("cwd: /"), { kind: "system", text: "Working directory: /srv" } as const];
  assert.equal(
    recoverWorkingDirectory("You are a helpful assistant.", typed, () => true),
    undefined,
  );
  assert.equal(recoverWorkingDirectory("cwd: /home/dev", typed, () => true), "/home/dev");
});

Deno.test("cwd: Codex <environment_context> counts in a mid-conversation system message", () => {
  const ctx = "<environment_context><cwd>/home/dev/codex</cwd></environment_context>";
  const found = recoverWorkingDirectory("", [{ kind: "system", text: ctx }], () => true);
  assert.equal(found, "/home/dev/codex");
});
