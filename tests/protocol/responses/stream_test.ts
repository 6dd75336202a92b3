import assert from "node:assert/strict";
import type { TurnEvent } from "../../../src/council/types.ts";
import { isProgressItemId, isProgressMarker } from "../../../src/protocol/ids.ts";
import { PROGRESS_TITLE, ResponsesStream } from "../../../src/protocol/responses/stream.ts";
import type { SseFrame } from "../../../src/protocol/sse_writer.ts";
import {
  answer,
  assertResponsesGrammar,
  delta,
  done,
  progress,
} from "../../support/scripted_turns.ts";

// deno-lint-ignore no-explicit-any
type Frame = { event: string; data: any };

const HEAD = { id: "resp_1", model: "gpt-5.5", createdAt: 1_700_000_000, instructions: null };

function renderer(progressOn: boolean) {
  return new ResponsesStream({ head: HEAD, inputTokens: 100, progress: progressOn });
}

function render(progressOn: boolean, events: TurnEvent[]): Frame[] {
  const stream = renderer(progressOn);
  const frames: SseFrame[] = [...stream.start()];
  for (const event of events) frames.push(...stream.event(event));
  return frames as Frame[];
}

const types = (frames: Frame[]) => frames.map((f) => f.data.type.replace(/^response\./, ""));

Deno.test("responses stream: progress reasoning item at 0, live message at 1, completed last", () => {
  const frames = render(true, [
    progress("consulting a, b"),
    delta("Hel"),
    delta("lo"),
    done(answer("Hello")),
  ]);
  assertResponsesGrammar(frames);
  assert.deepEqual(types(frames), [
    "created",
    "in_progress",
    "output_item.added",
    "reasoning_summary_part.added",
    "reasoning_summary_text.delta",
    "reasoning_summary_text.delta",
    "reasoning_summary_text.done",
    "reasoning_summary_part.done",
    "output_item.done",
    "output_item.added",
    "content_part.added",
    "output_text.delta",
    "output_text.delta",
    "output_text.done",
    "content_part.done",
    "output_item.done",
    "completed",
  ]);
  const reasoning = frames[8].data.item;
  assert.ok(isProgressItemId(reasoning.id));
  assert.ok(isProgressMarker(reasoning.encrypted_content));
  assert.equal(reasoning.summary[0].text, `${PROGRESS_TITLE}\n\nconsulting a, b\n`);
  assert.match(reasoning.summary[0].text, /^\*\*[^*]+\*\*/, "starts with a bold title");
  assert.equal(frames[9].data.output_index, 1);
  const message = frames[15].data.item;
  assert.deepEqual(message.content, [{ type: "output_text", text: "Hello", annotations: [] }]);
  const completed = frames.at(-1)!.data.response;
  assert.equal(completed.status, "completed");
  assert.equal(completed.id, "resp_1");
  assert.equal(completed.model, "gpt-5.5");
  assert.deepEqual(completed.usage, {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 42,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 142,
  });
});

Deno.test("responses stream: with progress off the message is output 0 and progress is hidden", () => {
  const frames = render(false, [progress("consulting a"), delta("Hi"), done(answer("Hi"))]);
  assertResponsesGrammar(frames);
  assert.deepEqual(types(frames), [
    "created",
    "in_progress",
    "output_item.added",
    "content_part.added",
    "output_text.delta",
    "output_text.done",
    "content_part.done",
    "output_item.done",
    "completed",
  ]);
  assert.ok(!JSON.stringify(frames).includes("consulting"));
});

Deno.test("responses stream: an answer without deltas is sent as one delta", () => {
  const frames = render(true, [done(answer("Whole answer."))]);
  assertResponsesGrammar(frames);
  const deltas = frames.filter((f) => f.data.type === "response.output_text.delta");
  assert.deepEqual(deltas.map((f) => f.data.delta), ["Whole answer."]);
});

Deno.test("responses stream: a missing tail is sent; late progress is dropped", () => {
  const frames = render(true, [delta("Hel"), progress("late"), done(answer("Hello"))]);
  assertResponsesGrammar(frames);
  const deltas = frames.filter((f) => f.data.type === "response.output_text.delta");
  assert.deepEqual(deltas.map((f) => f.data.delta), ["Hel", "lo"]);
  assert.ok(!JSON.stringify(frames).includes("late"));
});

Deno.test("responses stream: keep-alives are response.in_progress in the same sequence", () => {
  const stream = renderer(true);
  const frames: SseFrame[] = [...stream.start(), stream.keepAlive()];
  frames.push(...stream.event(delta("x")), stream.keepAlive(), ...stream.event(done(answer("x"))));
  assertResponsesGrammar(frames as Frame[]);
  assert.equal(frames.filter((f) => f.event === "response.in_progress").length, 3);
});

Deno.test("responses stream: a failure is response.failed with error {code, message}", () => {
  const stream = renderer(true);
  const frames: SseFrame[] = [...stream.start(), ...stream.event(progress("p"))];
  frames.push(...stream.fail("every agent failed to start"));
  assertResponsesGrammar(frames as Frame[]);
  const failed = (frames.at(-1) as Frame).data;
  assert.equal(failed.type, "response.failed");
  assert.equal(failed.response.status, "failed");
  assert.deepEqual(failed.response.error, {
    code: "server_error",
    message: "every agent failed to start",
  });
  assert.equal(stream.finished, true);
  assert.deepEqual(stream.event(done(answer("late"))), []);
});

Deno.test("responses stream: a tool outcome is never a function_call", () => {
  const frames = render(false, [
    done({ kind: "tool", name: "exec_command", input: { cmd: "ls" } }),
  ]);
  assertResponsesGrammar(frames);
  assert.ok(!JSON.stringify(frames).includes("function_call"));
  const message = frames.at(-1)!.data.response.output[0];
  assert.equal(message.type, "message");
  assert.match(message.content[0].text, /exec_command/);
});
