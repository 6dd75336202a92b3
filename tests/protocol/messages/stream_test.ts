import assert from "node:assert/strict";
import type { TurnEvent } from "../../../src/council/types.ts";
import { isProgressMarker } from "../../../src/protocol/ids.ts";
import { MessagesStream } from "../../../src/protocol/messages/stream.ts";
import type { SseFrame } from "../../../src/protocol/sse_writer.ts";
import {
  answer,
  assertMessagesGrammar,
  delta,
  done,
  progress,
  USAGE,
} from "../../support/scripted_turns.ts";

// deno-lint-ignore no-explicit-any
type Frame = { event: string; data: any };

function render(progressOn: boolean, events: TurnEvent[]): Frame[] {
  const stream = new MessagesStream({
    id: "msg_1",
    model: "claude-x",
    inputTokens: 123,
    progress: progressOn,
  });
  const frames: SseFrame[] = [...stream.start()];
  for (const event of events) frames.push(...stream.event(event));
  return frames as Frame[];
}

/** Compact trace: `start:thinking@0`, `delta:thinking_delta@0`, … */
function trace(frames: Frame[]): string[] {
  return frames.map((f) => {
    const d = f.data;
    switch (f.event) {
      case "content_block_start":
        return `start:${d.content_block.type}@${d.index}`;
      case "content_block_delta":
        return `${d.delta.type}@${d.index}`;
      case "content_block_stop":
        return `stop@${d.index}`;
      case "message_delta":
        return `message_delta:${d.delta.stop_reason}`;
      default:
        return f.event;
    }
  });
}

Deno.test("messages stream: answer turn with progress — thinking at 0, live text at 1", () => {
  const frames = render(true, [
    progress("consulting a, b"),
    progress("a finished"),
    delta("Hel"),
    delta("lo"),
    done(answer("Hello")),
  ]);
  assertMessagesGrammar(frames);
  assert.deepEqual(trace(frames), [
    "message_start",
    "start:thinking@0",
    "thinking_delta@0",
    "thinking_delta@0",
    "signature_delta@0",
    "stop@0",
    "start:text@1",
    "text_delta@1",
    "text_delta@1",
    "stop@1",
    "message_delta:end_turn",
    "message_stop",
  ]);
  assert.deepEqual(frames[1].data.content_block, { type: "thinking", thinking: "", signature: "" });
  assert.equal(frames[2].data.delta.thinking, "consulting a, b\n");
  assert.equal(frames[3].data.delta.thinking, "a finished\n");
  assert.ok(isProgressMarker(frames[4].data.delta.signature), "placeholder signature");
  assert.equal(frames[7].data.delta.text + frames[8].data.delta.text, "Hello");
  const start = frames[0].data.message;
  assert.deepEqual(
    { ...start, usage: undefined },
    {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-x",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: undefined,
    },
  );
  assert.equal(start.usage.input_tokens, 123);
  assert.deepEqual(frames[10].data.usage, { input_tokens: 123, output_tokens: USAGE.outputTokens });
  assert.deepEqual(frames[10].data.delta, { stop_reason: "end_turn", stop_sequence: null });
});

Deno.test("messages stream: with progress off the answer is block 0 and progress is not shown", () => {
  const frames = render(false, [progress("consulting a"), delta("Hi"), done(answer("Hi"))]);
  assertMessagesGrammar(frames);
  assert.deepEqual(trace(frames), [
    "message_start",
    "start:text@0",
    "text_delta@0",
    "stop@0",
    "message_delta:end_turn",
    "message_stop",
  ]);
});

Deno.test("messages stream: tool turn — progress closed, then the tool_use block whole", () => {
  const input = { file_path: "/tmp/a b.txt", limit: 5 };
  const frames = render(true, [
    progress("consulting a, b"),
    progress("recap: 2 agents"),
    done({ kind: "tool", name: "Read", input }),
  ]);
  assertMessagesGrammar(frames);
  assert.deepEqual(trace(frames), [
    "message_start",
    "start:thinking@0",
    "thinking_delta@0",
    "thinking_delta@0",
    "signature_delta@0",
    "stop@0",
    "start:tool_use@1",
    "input_json_delta@1",
    "stop@1",
    "message_delta:tool_use",
    "message_stop",
  ]);
  const block = frames[6].data.content_block;
  assert.equal(block.name, "Read");
  assert.deepEqual(block.input, {});
  assert.match(block.id, /^toolu_[0-9a-f]{24}$/);
  assert.deepEqual(JSON.parse(frames[7].data.delta.partial_json), input);
});

Deno.test("messages stream: tool turn without progress puts the tool_use at index 0", () => {
  const frames = render(false, [done({ kind: "tool", name: "Bash", input: { command: "ls" } })]);
  assertMessagesGrammar(frames);
  assert.deepEqual(trace(frames).slice(1, 4), ["start:tool_use@0", "input_json_delta@0", "stop@0"]);
});

Deno.test("messages stream: an answer that arrives without deltas is emitted as one text block", () => {
  const frames = render(true, [progress("a proposes an answer"), done(answer("All done."))]);
  assertMessagesGrammar(frames);
  assert.deepEqual(trace(frames), [
    "message_start",
    "start:thinking@0",
    "thinking_delta@0",
    "signature_delta@0",
    "stop@0",
    "start:text@1",
    "text_delta@1",
    "stop@1",
    "message_delta:end_turn",
    "message_stop",
  ]);
  assert.equal(frames[6].data.delta.text, "All done.");
});

Deno.test("messages stream: a missing tail of the answer is sent before the block closes", () => {
  const frames = render(false, [delta("Hel"), done(answer("Hello"))]);
  const texts = frames.filter((f) => f.data.delta?.type === "text_delta").map((f) =>
    f.data.delta.text
  );
  assert.deepEqual(texts, ["Hel", "lo"]);
});

Deno.test("messages stream: progress after the answer began is dropped, blocks never reopen", () => {
  const frames = render(true, [delta("A"), progress("late line"), delta("B"), done(answer("AB"))]);
  assertMessagesGrammar(frames);
  assert.ok(!JSON.stringify(frames).includes("late line"));
});

Deno.test("messages stream: failure writes the error envelope and ends the message", () => {
  const stream = new MessagesStream({ id: "m", model: "x", inputTokens: 5, progress: true });
  stream.start();
  const failed = stream.fail("boom");
  assert.deepEqual(failed, [{
    event: "error",
    data: { type: "error", error: { type: "api_error", message: "boom" } },
  }]);
  assert.equal(stream.finished, true);
  assert.deepEqual(stream.event(done(answer("late"))), []);
  assert.deepEqual(stream.fail("again"), []);
});

Deno.test("messages stream: nothing follows message_stop", () => {
  const stream = new MessagesStream({ id: "m", model: "x", inputTokens: 5, progress: false });
  stream.start();
  stream.event(done(answer("x")));
  assert.deepEqual(stream.event(delta("more")), []);
  assert.deepEqual(stream.event(progress("more")), []);
});

Deno.test("messages stream: keep-alive is a ping frame", () => {
  const stream = new MessagesStream({ id: "m", model: "x", inputTokens: 5, progress: false });
  assert.deepEqual(stream.keepAlive(), { event: "ping", data: { type: "ping" } });
});
