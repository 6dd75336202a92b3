import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import { encodeFrame, type SseChannel, sseResponse } from "../../src/protocol/sse_writer.ts";
import { collectTurn, TurnIncompleteError, untilAborted } from "../../src/protocol/consume_turn.ts";
import { answer, done, fixedTurn, progress, ScriptedTurn } from "../support/scripted_turns.ts";
import { SseReader } from "../support/sse_reader.ts";
import { newTurnRequest } from "../../src/council/request/turn_request.ts";

const ping = () => ({ event: "ping", data: { type: "ping" } });

/** An SSE response whose producer the test drives through the returned channel. */
function driven(clock: FakeClock, requestSignal?: AbortSignal) {
  const channel = Promise.withResolvers<SseChannel>();
  const finish = Promise.withResolvers<void>();
  const response = sseResponse({
    clock,
    keepAliveMs: 1000,
    keepAlive: ping,
    requestSignal,
    run: (c) => {
      channel.resolve(c);
      return finish.promise;
    },
  });
  return { response, channel: channel.promise, finish };
}

Deno.test("sse: a frame is an event line, one JSON data line and a blank line", () => {
  assert.equal(
    encodeFrame({ event: "message_stop", data: { type: "message_stop", text: "a\nb" } }),
    'event: message_stop\ndata: {"type":"message_stop","text":"a\\nb"}\n\n',
  );
});

Deno.test("sse: frames reach the client while the producer is still running", async () => {
  const clock = new FakeClock();
  const { response, channel, finish } = driven(clock);
  assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const reader = new SseReader(response);
  (await channel).send({ event: "one", data: { type: "one" } });
  assert.equal((await reader.next())?.event, "one", "first frame arrives before the producer ends");
  (await channel).send({ event: "two", data: { type: "two" } });
  assert.equal((await reader.next())?.event, "two");
  finish.resolve();
  assert.equal(await reader.next(), undefined, "stream closes when the producer ends");
  assert.equal(clock.pending, 0, "keep-alive timer cleared");
});

Deno.test("sse: a keep-alive frame goes out every keepAliveMs, also in silence", async () => {
  const clock = new FakeClock();
  const { response, channel, finish } = driven(clock);
  const reader = new SseReader(response);
  await channel;
  clock.advance(999);
  clock.advance(1);
  assert.equal((await reader.next())?.event, "ping");
  clock.advance(2000);
  assert.equal((await reader.next())?.event, "ping");
  assert.equal((await reader.next())?.event, "ping");
  finish.resolve();
  assert.equal(await reader.next(), undefined);
  assert.equal(reader.records.length, 3);
});

Deno.test("sse: the client cancelling the stream aborts the channel and stops keep-alives", async () => {
  const clock = new FakeClock();
  const { response, channel, finish } = driven(clock);
  const reader = new SseReader(response);
  const c = await channel;
  await reader.cancel();
  assert.equal(c.signal.aborted, true);
  assert.equal(clock.pending, 0);
  assert.equal(
    c.send({ event: "late", data: {} }),
    false,
    "nothing is written after the client left",
  );
  finish.resolve();
});

Deno.test("sse: the request signal aborting (client disconnect) aborts the channel", async () => {
  const clock = new FakeClock();
  const request = new AbortController();
  const { response, channel, finish } = driven(clock, request.signal);
  const c = await channel;
  request.abort();
  assert.equal(c.signal.aborted, true);
  assert.equal(clock.pending, 0);
  finish.resolve();
  await response.body!.cancel();
});

Deno.test("sse: a producer that throws still ends the stream", async () => {
  const clock = new FakeClock();
  const response = sseResponse({
    clock,
    keepAliveMs: 1000,
    keepAlive: ping,
    run: (c) => {
      c.send({ event: "a", data: {} });
      return Promise.reject(new Error("defect"));
    },
  });
  assert.equal(await response.text(), "event: a\ndata: {}\n\n");
  assert.equal(clock.pending, 0);
});

Deno.test("untilAborted: stops at once on abort although the source is blocked, and returns it", async () => {
  const turn = new ScriptedTurn();
  const controller = new AbortController();
  // The fake source ignores this signal, so only untilAborted can end the loop.
  const source = turn.runTurn(await newTurnRequest(emptyInput()), new AbortController().signal);
  const seen: string[] = [];
  const loop = (async () => {
    for await (const event of untilAborted(source, controller.signal)) {
      seen.push(event.type);
      if (seen.length === 1) controller.abort();
    }
  })();
  turn.push(progress("x"));
  await loop;
  assert.deepEqual(seen, ["progress"]);
  assert.equal(turn.returned, false, "the generator is still blocked in its await");
  // Waking it yields once more; only the return() untilAborted queued can then finish it.
  turn.push(progress("y"));
  await turn.finished;
  assert.equal(turn.returned, true);
});

function emptyInput() {
  return { model: "m", system: "", transcript: [], tools: [], continuation: false };
}

Deno.test("collectTurn: returns the done event's outcome and usage", async () => {
  const request = await newTurnRequest(emptyInput());
  const result = await collectTurn(
    fixedTurn([progress("p"), done(answer("A"))]),
    request,
    new AbortController().signal,
  );
  assert.deepEqual(result.outcome, answer("A"));
  assert.equal(result.usage.outputTokens, 42);
});

Deno.test("collectTurn: a turn without done is an error", async () => {
  const request = await newTurnRequest(emptyInput());
  await assert.rejects(
    collectTurn(fixedTurn([progress("p")]), request, new AbortController().signal),
    TurnIncompleteError,
  );
});
