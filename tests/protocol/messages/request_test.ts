import assert from "node:assert/strict";
import { newTurnRequest } from "../../../src/council/request/turn_request.ts";
import { newProgressSignature } from "../../../src/protocol/ids.ts";
import { describeInvalid } from "../../../src/protocol/invalid.ts";
import {
  MessagesRequestSchema,
  messagesTurnInput,
} from "../../../src/protocol/messages/request.ts";
import {
  claude330Ask,
  CLAUDE_SYSTEM_MESSAGE,
  claudeAsk,
  claudeBody,
  claudeFirstUser,
  CWD,
} from "../../support/host_bodies.ts";

function input(body: unknown) {
  return messagesTurnInput(MessagesRequestSchema.parse(body));
}

function invalid(body: unknown) {
  const parsed = MessagesRequestSchema.safeParse(body);
  assert.equal(parsed.success, false, "body should be rejected");
  return describeInvalid(parsed.error!, body);
}

const toolRound = (assistant: unknown[]) => [
  claudeFirstUser("read notes.txt"),
  CLAUDE_SYSTEM_MESSAGE,
  { role: "assistant", content: assistant },
  {
    role: "user",
    content: [{
      tool_use_id: "toolu_1",
      type: "tool_result",
      content: "1\tfirst line",
      cache_control: { type: "ephemeral" },
    }],
  },
];

Deno.test("messages request: a Claude Code first turn becomes a fresh turn input", () => {
  const turn = input(claudeAsk("say hi"));
  assert.equal(turn.model, "claude-opus-4-8");
  assert.ok(!turn.system.includes("x-anthropic-billing-header"), "billing header dropped");
  assert.ok(turn.system.startsWith("You are a test agent.\n"));
  assert.ok(turn.system.includes(`Primary working directory: ${CWD}`));
  assert.equal(turn.transcript.length, 2);
  assert.equal(turn.transcript[0].kind, "user");
  assert.match((turn.transcript[0] as { text: string }).text, /<system-reminder>[\s\S]*\nsay hi$/);
  assert.deepEqual(turn.transcript[1], { kind: "system", text: CLAUDE_SYSTEM_MESSAGE.content });
  assert.deepEqual(turn.tools.map((t) => t.name), ["Read", "Bash"]);
  assert.equal(turn.tools[0].description, "Reads a file.");
  assert.deepEqual(turn.tools[0].inputSchema.required, ["file_path"]);
  assert.equal(turn.continuation, false);
  assert.equal(turn.hostCredentials, undefined);
});

Deno.test("messages request: the council derives cwd and the ask from Claude Code's shapes", async () => {
  const request = await newTurnRequest(input(claudeAsk("say hi")));
  assert.equal(request.cwd, CWD);
  assert.equal(request.ask, "say hi");
});

Deno.test("messages request: Claude Code 2.1.330 — cwd from the system-role message", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "cc330-cwd-" }));
  try {
    const body = claude330Ask("say hi", dir);
    assert.ok(!JSON.stringify(body.system).includes("working directory"), "not in system");
    const request = await newTurnRequest(input(body));
    assert.equal(request.cwd, dir);
    assert.equal(request.ask, "say hi");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("messages request: a tool round trip is a continuation with ordered entries", () => {
  const turn = input(claudeBody(toolRound([
    { type: "text", text: "I will read it." },
    { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/tmp/notes.txt" } },
  ])));
  assert.equal(turn.continuation, true);
  assert.deepEqual(turn.transcript.slice(2), [
    { kind: "assistant", text: "I will read it." },
    { kind: "tool_call", id: "toolu_1", name: "Read", input: { file_path: "/tmp/notes.txt" } },
    { kind: "tool_result", id: "toolu_1", text: "1\tfirst line", isError: false },
  ]);
});

Deno.test("messages request: a tool_result followed by a reminder is still a continuation", () => {
  const body = claudeBody([
    claudeFirstUser("go"),
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "t", name: "Bash", input: { command: "ls" } }],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t", content: "a.txt" },
        { type: "text", text: "<system-reminder>note</system-reminder>" },
      ],
    },
  ]);
  assert.equal(input(body).continuation, true);
});

Deno.test("messages request: a user text after the tool round is a fresh ask", () => {
  const body = claudeBody([
    ...toolRound([{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/x" } }]),
    { role: "assistant", content: [{ type: "text", text: "It says hi." }] },
    { role: "user", content: "and the second line?" },
  ]);
  const turn = input(body);
  assert.equal(turn.continuation, false);
  assert.deepEqual(turn.transcript.at(-1), { kind: "user", text: "and the second line?" });
});

Deno.test("messages request: tool_result text and errors; its images are attachments", () => {
  const turn = input(claudeBody([
    claudeFirstUser("look"),
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: {} }] },
    {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "t1",
        is_error: true,
        content: [
          { type: "text", text: "could not read" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
        ],
      }],
    },
  ]));
  assert.deepEqual(turn.transcript.at(-1), {
    kind: "tool_result",
    id: "t1",
    text: "could not read",
    attachments: [{
      kind: "image",
      mediaType: "image/png",
      source: { type: "base64", data: "AAAA" },
    }],
    isError: true,
  });
});

Deno.test("messages request: images and documents in a message are attachments, not text", () => {
  const turn = input(claudeBody([{
    role: "user",
    content: [
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "AAAA" } },
      { type: "document", title: "spec.pdf", source: { type: "base64", data: "AAAA" } },
      { type: "text", text: "what is this?" },
    ],
  }]));
  assert.deepEqual(turn.transcript, [{
    kind: "user",
    text: "what is this?",
    attachments: [
      { kind: "image", mediaType: "image/jpeg", source: { type: "base64", data: "AAAA" } },
      {
        kind: "document",
        mediaType: "application/pdf",
        source: { type: "base64", data: "AAAA" },
        name: "spec.pdf",
      },
    ],
  }]);
});

Deno.test("messages request: our progress thinking block is stripped; the session key is unchanged", async () => {
  const withOurs = claudeBody(toolRound([
    {
      type: "thinking",
      thinking: "consulting claude, codex\nclaude done\n",
      signature: newProgressSignature(),
    },
    { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/x" } },
  ]));
  const without = claudeBody(toolRound([
    { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/x" } },
  ]));
  const a = await newTurnRequest(input(withOurs));
  const b = await newTurnRequest(input(without));
  assert.deepEqual(a.transcript, b.transcript);
  assert.equal(a.system, b.system);
  assert.equal(a.sessionKey, b.sessionKey);
  assert.ok(!JSON.stringify(a.transcript).includes("consulting"));
});

Deno.test("messages request: a real model's thinking is kept as context; redacted thinking is dropped", () => {
  const turn = input(claudeBody(toolRound([
    { type: "thinking", thinking: "The file is small.", signature: "EqQBCkYIBxgCKkD" },
    { type: "redacted_thinking", data: "opaque" },
    { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/x" } },
  ])));
  assert.deepEqual(turn.transcript[2], { kind: "assistant", text: "The file is small." });
  assert.ok(!JSON.stringify(turn.transcript).includes("opaque"));
});

Deno.test("messages request: string system, string content and unknown fields/blocks are tolerated", () => {
  const turn = input({
    model: "m",
    system: "Be brief.",
    temperature: 1,
    top_k: 5,
    tool_choice: { type: "auto" },
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "hi", citations: null },
          { type: "server_tool_use", id: "s", name: "web_search", input: {} },
        ],
      },
      { role: "assistant", content: "hello", extra: true },
    ],
    tools: [
      {
        name: "Lookup",
        description: "d",
        input_schema: { type: "object" },
        strict: true,
        defer_loading: false,
        eager_input_streaming: true,
        cache_control: { type: "ephemeral" },
      },
      { type: "web_search_20250305", name: "web_search", max_uses: 3 },
      { name: "NoSchema" },
    ],
  });
  assert.equal(turn.system, "Be brief.");
  assert.deepEqual(turn.transcript, [
    { kind: "user", text: "hi" },
    { kind: "assistant", text: "hello" },
  ]);
  assert.deepEqual(
    turn.tools.map((t) => t.name),
    ["Lookup", "NoSchema"],
    "server tools are not ours",
  );
  assert.deepEqual(turn.tools[1].inputSchema, { type: "object" });
});

Deno.test("messages request: invalid bodies name the bad field", () => {
  assert.deepEqual(invalid({ messages: [{ role: "user", content: "x" }] }).param, "model");
  assert.match(invalid({ messages: [], model: "m" }).message, /^messages: .*at least one message/);
  assert.match(invalid({ model: "m", messages: "hi" }).message, /^messages: /);
  assert.match(
    invalid({ model: "m", messages: [{ role: "bot", content: "x" }] }).message,
    /^messages\.0\.role: /,
  );
  const missingText = invalid({
    model: "m",
    messages: [{ role: "user", content: [{ type: "text" }] }],
  });
  assert.equal(missingText.param, "messages.0.content.0.text");
  assert.equal(missingText.missing, true);
  assert.match(missingText.message, /messages\.0\.content\.0\.text: field is required/);
  assert.match(
    invalid({ model: "m", messages: [{ role: "user", content: 7 }] }).message,
    /messages\.0\.content: expected a string or an array of content blocks/,
  );
  assert.equal(
    invalid({
      model: "m",
      messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }],
    }).param,
    "messages.0.content.0.tool_use_id",
  );
  assert.equal(
    invalid({ model: "m", messages: [{ role: "user", content: [{ text: "x" }] }] }).message,
    "messages.0.content.0.type: field is required",
  );
  assert.match(
    invalid({ model: "m", messages: [{ role: "user", content: [{ type: 3 }] }] }).message,
    /messages\.0\.content\.0\.type: expected a content block/,
  );
  assert.equal(invalid([1, 2]).param, "");
});
