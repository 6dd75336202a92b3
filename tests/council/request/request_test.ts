import assert from "node:assert/strict";
import { classifyAsk, stripScaffolding } from "../../../src/council/request/ask.ts";
import { newTurnRequest } from "../../../src/council/request/turn_request.ts";
import { sessionKeyOf } from "../../../src/council/session_key.ts";
import type { TranscriptEntry } from "../../../src/council/types.ts";

const user = (text: string): TranscriptEntry => ({ kind: "user", text });
const assistant = (text: string): TranscriptEntry => ({ kind: "assistant", text });

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
