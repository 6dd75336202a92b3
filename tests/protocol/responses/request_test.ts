import assert from "node:assert/strict";
import { newTurnRequest } from "../../../src/council/request/turn_request.ts";
import { newProgressItemId, newProgressSignature } from "../../../src/protocol/ids.ts";
import { describeInvalid } from "../../../src/protocol/invalid.ts";
import {
  ResponsesRequestSchema,
  responsesTurnInput,
} from "../../../src/protocol/responses/request.ts";
import { codexBody, codexInput, CWD } from "../../support/host_bodies.ts";

function input(body: unknown) {
  return responsesTurnInput(ResponsesRequestSchema.parse(body));
}

function invalid(body: unknown) {
  const parsed = ResponsesRequestSchema.safeParse(body);
  assert.equal(parsed.success, false, "body should be rejected");
  return describeInvalid(parsed.error!, body);
}

const toolRound = [
  {
    type: "function_call",
    status: "completed",
    id: "fc_1",
    name: "exec_command",
    arguments: '{"cmd":"head -n 1 notes.txt"}',
    call_id: "call_1",
  },
  { type: "function_call_output", id: "fco_1", call_id: "call_1", output: "first line\n" },
];

Deno.test("responses request: a Codex body — developer messages are the system prompt, tools ignored", async () => {
  const turn = input(codexBody(codexInput("say hi")));
  assert.equal(turn.model, "gpt-5.5");
  assert.equal(
    turn.system,
    "You are a test coding agent.\n\n<permissions instructions>\nread-only\n</permissions instructions>\n<tools>\nnone deferred\n</tools>",
  );
  assert.equal(turn.transcript.length, 2);
  assert.match((turn.transcript[0] as { text: string }).text, /^<environment_context>/);
  assert.deepEqual(turn.transcript[1], { kind: "user", text: "say hi" });
  assert.deepEqual(turn.tools, [], "declared tools never reach the council");
  assert.equal(turn.continuation, false);
  const request = await newTurnRequest(turn);
  assert.equal(request.cwd, CWD, "cwd from <environment_context><cwd>");
  assert.equal(request.ask, "say hi");
});

Deno.test("responses request: a string input and instructions", () => {
  const turn = input({ model: "m", instructions: "Be brief.", input: "hello" });
  assert.equal(turn.system, "Be brief.");
  assert.deepEqual(turn.transcript, [{ kind: "user", text: "hello" }]);
});

Deno.test("responses request: instructions come before the developer messages", () => {
  const turn = input({
    model: "m",
    instructions: "Base.",
    input: [
      { role: "system", content: "Sys." },
      { role: "user", content: "hi" },
    ],
  });
  assert.equal(turn.system, "Base.\n\nSys.");
  assert.deepEqual(turn.transcript, [{ kind: "user", text: "hi" }]);
});

Deno.test("responses request: function_call and its output are tool entries; last output = continuation", () => {
  const turn = input(codexBody([...codexInput("print the first line"), ...toolRound]));
  assert.equal(turn.continuation, true);
  assert.deepEqual(turn.transcript.slice(2), [
    {
      kind: "tool_call",
      id: "call_1",
      name: "exec_command",
      input: { cmd: "head -n 1 notes.txt" },
    },
    { kind: "tool_result", id: "call_1", text: "first line\n", isError: false },
  ]);
  assert.deepEqual(turn.tools, []);
});

Deno.test("responses request: a new user message after the tool round is a fresh ask", () => {
  const turn = input(codexBody([
    ...codexInput("first"),
    ...toolRound,
    {
      type: "message",
      status: "completed",
      id: "msg_a",
      role: "assistant",
      content: [{ type: "output_text", text: "It says first line.", annotations: [] }],
    },
    { type: "message", role: "user", content: [{ type: "input_text", text: "and the second?" }] },
  ]));
  assert.equal(turn.continuation, false);
  assert.deepEqual(turn.transcript.slice(-2), [
    { kind: "assistant", text: "It says first line." },
    { kind: "user", text: "and the second?" },
  ]);
});

Deno.test("responses request: our reasoning item is stripped (by id or by marker); same session key", async () => {
  const ours = [
    {
      type: "reasoning",
      id: newProgressItemId(),
      summary: [{ type: "summary_text", text: "**Consulting the council**\n\nconsulting a, b\n" }],
      content: null,
      encrypted_content: newProgressSignature(),
    },
    // Codex without `include: reasoning.encrypted_content` echoes only the id…
    {
      type: "reasoning",
      id: newProgressItemId(),
      summary: [{ type: "summary_text", text: "consulting" }],
    },
    // …and an id rewritten by a proxy still carries our marker.
    { type: "reasoning", id: "rs_other", summary: [], encrypted_content: newProgressSignature() },
  ];
  const answerItem = {
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "Hi." }],
  };
  const next = { type: "message", role: "user", content: [{ type: "input_text", text: "again" }] };
  const a = await newTurnRequest(
    input(codexBody([...codexInput("hi"), ...ours, answerItem, next])),
  );
  const b = await newTurnRequest(input(codexBody([...codexInput("hi"), answerItem, next])));
  assert.deepEqual(a.transcript, b.transcript);
  assert.equal(a.sessionKey, b.sessionKey);
  assert.ok(!JSON.stringify(a).includes("consulting"));
});

Deno.test("responses request: a real model's reasoning summary is kept as context", () => {
  const turn = input({
    model: "m",
    input: [
      { role: "user", content: "q" },
      {
        type: "reasoning",
        id: "rs_real",
        summary: [{ type: "summary_text", text: "**Planning**\n\nLook first." }],
        encrypted_content: "gAAAA-opaque",
      },
    ],
  });
  assert.deepEqual(turn.transcript[1], { kind: "assistant", text: "**Planning**\n\nLook first." });
});

Deno.test("responses request: unknown item and part types are ignored; short-form messages work", () => {
  const turn = input({
    model: "m",
    input: [
      { type: "additional_tools", role: "developer", tools: [{ type: "namespace" }] },
      { type: "item_reference", id: "x" },
      { type: "web_search_call", id: "ws", status: "completed" },
      {
        role: "user",
        content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image_url: "data:image/png;base64,AAAA" },
          { type: "input_audio", data: "AAAA" },
        ],
      },
    ],
    tools: [{ type: "function", name: "f", parameters: {} }, { type: "web_search" }],
    tool_choice: "auto",
    reasoning: { effort: "high", summary: "auto" },
    previous_response_id: null,
    truncation: "auto",
  });
  assert.deepEqual(turn.transcript, [{
    kind: "user",
    text: "look",
    attachments: [{
      kind: "image",
      mediaType: "image/png",
      source: { type: "base64", data: "AAAA" },
    }],
  }]);
  assert.equal(turn.system, "");
});

Deno.test("responses request: Codex's leading additional_tools item does not hide the base prompt", () => {
  const turn = input(codexBody([
    { type: "additional_tools", id: "at_1", role: "developer", tools: [{ type: "namespace" }] },
    ...codexInput("hi"),
  ]));
  assert.match(turn.system, /^You are a test coding agent\./);
  assert.equal(turn.transcript[0].kind, "user");
});

Deno.test("responses request: a later developer message stays in the transcript (stable session key)", async () => {
  const base = codexInput("hi");
  const later = {
    type: "message",
    role: "developer",
    content: [{ type: "input_text", text: "Approval policy changed." }],
  };
  const a = await newTurnRequest(input(codexBody([...base, later])));
  const b = await newTurnRequest(input(codexBody(base)));
  assert.deepEqual(a.transcript.at(-1), { kind: "system", text: "Approval policy changed." });
  assert.equal(a.system, b.system);
  assert.equal(a.sessionKey, b.sessionKey);
});

Deno.test("responses request: invalid bodies name the bad field", () => {
  const noModel = invalid({ input: "x" });
  assert.equal(noModel.param, "model");
  assert.equal(noModel.missing, true);
  assert.match(invalid({ model: "m", input: 5 }).message, /^input: expected a string or an array/);
  assert.equal(
    invalid({ model: "m", input: [{ role: "robot", content: "x" }] }).param,
    "input.0.role",
  );
  const noCallId = invalid({ model: "m", input: [{ type: "function_call_output", output: "x" }] });
  assert.equal(noCallId.param, "input.0.call_id");
  assert.match(noCallId.message, /input\.0\.call_id: field is required/);
  assert.equal(
    invalid({ model: "m", input: [{ role: "user", content: [{ type: "input_text" }] }] }).param,
    "input.0.content.0.text",
  );
  assert.equal(
    invalid({ model: "m", input: [{ content: "no role, no type" }] }).param,
    "input.0.type",
  );
});
