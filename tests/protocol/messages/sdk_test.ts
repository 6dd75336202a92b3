/** Conformance with the official Anthropic TypeScript SDK against a real running server. */
import Anthropic from "@anthropic-ai/sdk";
import assert from "node:assert/strict";
import type { TurnRequest } from "../../../src/council/types.ts";
import { isProgressMarker } from "../../../src/protocol/ids.ts";
import {
  answer,
  ANSWER_TURN,
  deps,
  done,
  fixedTurn,
  progress,
  ScriptedTurn,
  serve,
} from "../../support/scripted_turns.ts";

const READ_INPUT = { file_path: "/tmp/notes.txt", limit: 2 };

const TOOLS: Anthropic.Tool[] = [{
  name: "Read",
  description: "Reads a file.",
  input_schema: {
    type: "object",
    properties: { file_path: { type: "string" }, limit: { type: "integer" } },
    required: ["file_path"],
  },
}];

function client(url: string) {
  return new Anthropic({ baseURL: url, apiKey: "test-key", maxRetries: 0 });
}

const ask = (text: string) => ({
  model: "claude-opus-4-8",
  max_tokens: 1024,
  system: "You are a test agent.",
  messages: [{ role: "user" as const, content: text }],
});

const toolTurn = [
  progress("consulting a, b"),
  progress("recap: 2 agents"),
  done({ kind: "tool" as const, name: "Read", input: READ_INPUT }),
];

Deno.test("anthropic sdk: messages.create for an answer turn", async () => {
  await using server = serve(deps(fixedTurn(ANSWER_TURN)));
  const message = await client(server.url).messages.create(ask("what is it?"));
  assert.equal(message.type, "message");
  assert.equal(message.role, "assistant");
  assert.equal(message.model, "claude-opus-4-8");
  assert.deepEqual(message.content, [{ type: "text", text: "The answer is 42." }]);
  assert.equal(message.stop_reason, "end_turn");
  assert.ok(message.usage.input_tokens > 0);
  assert.equal(message.usage.output_tokens, 42);
});

Deno.test("anthropic sdk: messages.create for a tool turn", async () => {
  await using server = serve(deps(fixedTurn(toolTurn)));
  const message = await client(server.url).messages.create({ ...ask("read it"), tools: TOOLS });
  assert.equal(message.stop_reason, "tool_use");
  assert.equal(message.content.length, 1);
  const block = message.content[0];
  assert.equal(block.type, "tool_use");
  if (block.type !== "tool_use") return;
  assert.equal(block.name, "Read");
  assert.deepEqual(block.input, READ_INPUT);
});

Deno.test("anthropic sdk: stream().finalMessage() for an answer turn — thinking then text", async () => {
  await using server = serve(deps(fixedTurn(ANSWER_TURN)));
  const texts: string[] = [];
  const stream = client(server.url).messages.stream(ask("what is it?"));
  stream.on("text", (text) => texts.push(text));
  const message = await stream.finalMessage();
  assert.deepEqual(message.content.map((b) => b.type), ["thinking", "text"]);
  const [thinking, text] = message.content;
  if (thinking.type !== "thinking" || text.type !== "text") throw new Error("block types");
  assert.equal(thinking.thinking, "consulting a, b\na finished · 1.0s\n");
  assert.ok(isProgressMarker(thinking.signature));
  assert.equal(text.text, "The answer is 42.");
  assert.deepEqual(texts, ["The answer ", "is 42."], "text arrives as live deltas");
  assert.equal(message.stop_reason, "end_turn");
  assert.ok(message.usage.input_tokens > 0);
  assert.equal(message.usage.output_tokens, 42);
});

Deno.test("anthropic sdk: stream().finalMessage() for a tool turn — exact input, stop_reason tool_use", async () => {
  await using server = serve(deps(fixedTurn(toolTurn)));
  const message = await client(server.url).messages
    .stream({ ...ask("read it"), tools: TOOLS })
    .finalMessage();
  assert.deepEqual(message.content.map((b) => b.type), ["thinking", "tool_use"]);
  const tool = message.content[1];
  if (tool.type !== "tool_use") throw new Error("expected tool_use");
  assert.equal(tool.name, "Read");
  assert.deepEqual(tool.input, READ_INPUT);
  assert.match(tool.id, /^toolu_/);
  assert.equal(message.stop_reason, "tool_use");
});

Deno.test("anthropic sdk: with progress off the answer is the only block (index 0)", async () => {
  await using server = serve(deps(fixedTurn(ANSWER_TURN), { streamProgress: false }));
  const message = await client(server.url).messages.stream(ask("what is it?")).finalMessage();
  assert.deepEqual(message.content.map((b) => b.type), ["text"]);
  assert.equal(message.content[0].type === "text" && message.content[0].text, "The answer is 42.");
});

Deno.test("anthropic sdk: a tool turn without progress is one tool_use block", async () => {
  await using server = serve(deps(fixedTurn(toolTurn), { streamProgress: false }));
  const message = await client(server.url).messages
    .stream({ ...ask("read it"), tools: TOOLS })
    .finalMessage();
  assert.deepEqual(message.content.map((b) => b.type), ["tool_use"]);
});

Deno.test("anthropic sdk: our thinking block sent back is stripped — same transcript, same session key", async () => {
  const seen: TurnRequest[] = [];
  const turns = [toolTurn, [done(answer("It says hi."))], [done(answer("It says hi."))]];
  let call = 0;
  const runTurn = (request: TurnRequest, signal: AbortSignal) =>
    fixedTurn(turns[call++], seen)(request, signal);
  await using server = serve(deps(runTurn));
  const anthropic = client(server.url);
  const first = await anthropic.messages.stream({ ...ask("read it"), tools: TOOLS })
    .finalMessage();
  const tool = first.content.find((b) => b.type === "tool_use")!;
  const result = {
    role: "user" as const,
    content: [{ type: "tool_result" as const, tool_use_id: tool.id, content: "hi" }],
  };
  const base = ask("read it");
  // The host replays our thinking block verbatim…
  await anthropic.messages.create({
    ...base,
    tools: TOOLS,
    messages: [...base.messages, { role: "assistant", content: first.content }, result],
  });
  // …which must look exactly like history without it.
  await anthropic.messages.create({
    ...base,
    tools: TOOLS,
    messages: [...base.messages, { role: "assistant", content: [tool] }, result],
  });
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[1].transcript, seen[2].transcript);
  assert.equal(seen[1].system, seen[2].system);
  assert.equal(seen[1].sessionKey, seen[0].sessionKey);
  assert.equal(seen[1].sessionKey, seen[2].sessionKey);
  assert.equal(seen[1].continuation, true);
  assert.ok(!JSON.stringify(seen[1]).includes("consulting"), "progress never reaches a child");
});

Deno.test("anthropic sdk: a mid-stream failure surfaces as an API error", async () => {
  const turn = new ScriptedTurn();
  turn.push(progress("working")).throw(new Error("defect"));
  await using server = serve(deps(turn.runTurn));
  await assert.rejects(
    client(server.url).messages.stream(ask("x")).finalMessage(),
    (error: unknown) =>
      error instanceof Anthropic.APIError && /council turn failed/.test(error.message),
  );
});

Deno.test("anthropic sdk: a bad request is a 400 invalid_request_error", async () => {
  await using server = serve(deps(fixedTurn([])));
  await assert.rejects(
    client(server.url).messages.create({ ...ask("x"), messages: [] }),
    (error: unknown) =>
      error instanceof Anthropic.BadRequestError &&
      (error.error as { error: { type: string } }).error.type === "invalid_request_error",
  );
});
