/** Conformance with the official OpenAI TypeScript SDK against a real running server. */
import OpenAI from "openai";
import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import type { TurnRequest } from "../../../src/council/types.ts";
import {
  answer,
  ANSWER_TURN,
  delta,
  deps,
  done,
  fixedTurn,
  progress,
  ScriptedTurn,
  serve,
} from "../../support/scripted_turns.ts";

function client(url: string) {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: "sk-test", maxRetries: 0 });
}

const TOOLS: OpenAI.Responses.Tool[] = [{
  type: "function",
  name: "exec_command",
  description: "Runs a command.",
  strict: false,
  parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
}];

const base = { model: "gpt-5.5", instructions: "Be brief.", input: "what is it?" };

for (const tools of [undefined, TOOLS]) {
  const label = tools ? "with function tools" : "without tools";

  Deno.test(`openai sdk: responses.create ${label}`, async () => {
    const seen: TurnRequest[] = [];
    await using server = serve(deps(fixedTurn(ANSWER_TURN, seen)));
    const response = await client(server.url).responses.create({ ...base, tools });
    assert.equal(response.status, "completed");
    assert.equal(response.output_text, "The answer is 42.");
    assert.deepEqual(response.output.map((item) => item.type), ["message"]);
    assert.equal(response.usage?.output_tokens, 42);
    assert.ok((response.usage?.input_tokens ?? 0) > 0);
    assert.deepEqual(seen[0].tools, [], "the council never sees declared tools");
  });

  Deno.test(`openai sdk: responses.stream().finalResponse() ${label}`, async () => {
    await using server = serve(deps(fixedTurn(ANSWER_TURN)));
    const deltas: string[] = [];
    const stream = client(server.url).responses.stream({ ...base, tools });
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    assert.equal(response.status, "completed");
    assert.deepEqual(response.output.map((item) => item.type), ["reasoning", "message"]);
    assert.ok(!response.output.some((item) => item.type === "function_call"));
    const reasoning = response.output[0];
    if (reasoning.type !== "reasoning") throw new Error("expected reasoning");
    assert.match(
      reasoning.summary[0].text,
      /^\*\*.+\*\*\n\nconsulting a, b\na finished · 1\.0s\n$/,
    );
    assert.equal(response.output_text, "The answer is 42.");
    assert.deepEqual(deltas, ["The answer ", "is 42."]);
    assert.equal(response.usage?.total_tokens, (response.usage?.input_tokens ?? 0) + 42);
  });
}

Deno.test("openai sdk: with progress off the stream's output is the message alone", async () => {
  await using server = serve(deps(fixedTurn(ANSWER_TURN), { streamProgress: false }));
  const response = await client(server.url).responses.stream(base).finalResponse();
  assert.deepEqual(response.output.map((item) => item.type), ["message"]);
  assert.equal(response.output_text, "The answer is 42.");
});

Deno.test("openai sdk: keep-alives in the middle of the stream do not disturb the accumulator", async () => {
  const turn = new ScriptedTurn();
  const clock = new FakeClock();
  await using server = serve(deps(turn.runTurn, { clock, keepAliveMs: 1000 }));
  const stream = client(server.url).responses.stream(base);
  const seen: string[] = [];
  let ticked = false;
  stream.on("event", (event) => {
    seen.push(event.type);
    // Once the reasoning item is open and again once the message is open: a keep-alive each.
    if (event.type === "response.reasoning_summary_text.delta" && !ticked) {
      ticked = true;
      clock.advance(1000);
      turn.push(delta("Hel"));
    } else if (event.type === "response.output_text.delta" && event.delta === "Hel") {
      clock.advance(1000);
      turn.push(delta("lo"), done(answer("Hello")));
    }
  });
  const response = await stream.finalResponse();
  assert.equal(response.output_text, "Hello");
  assert.deepEqual(response.output.map((item) => item.type), ["reasoning", "message"]);
  assert.equal(seen.filter((type) => type === "response.in_progress").length, 3);
});

Deno.test("openai sdk: a failed turn is a response with status failed and the error", async () => {
  const turn = new ScriptedTurn();
  turn.push(progress("a failed to start")).throw(new Error("defect"));
  await using server = serve(deps(turn.runTurn));
  const stream = client(server.url).responses.stream(base);
  const failed: string[] = [];
  stream.on("response.failed", (event) => failed.push(event.response.error?.code ?? ""));
  const response = await stream.finalResponse();
  assert.equal(response.status, "failed");
  assert.deepEqual(failed, ["server_error"]);
  assert.match(response.error?.message ?? "", /council turn failed/);
});

Deno.test("openai sdk: a bad request is a 400 with the OpenAI error envelope", async () => {
  await using server = serve(deps(fixedTurn([])));
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    client(server.url).responses.create({ model: "gpt-5.5", input: 7 as any }),
    (error: unknown) =>
      error instanceof OpenAI.BadRequestError && error.param === "input" &&
      error.type === "invalid_request_error",
  );
});
