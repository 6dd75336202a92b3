/**
 * Test helpers for the protocol layer: a scripted fake RunTurn with controllable timing, a real
 * HTTP server mounting the protocol handlers, and an incremental raw-SSE reader.
 */
import { Hono } from "hono";
import type {
  Outcome,
  RunTurn,
  TurnEvent,
  TurnRequest,
  TurnUsage,
} from "../../src/council/types.ts";
import type { ProtocolDeps } from "../../src/protocol/protocol_handler.ts";
import { createMessagesHandler } from "../../src/protocol/messages/handler.ts";
import { createResponsesHandler } from "../../src/protocol/responses/handler.ts";

export const USAGE: TurnUsage = {
  inputTokens: 900,
  outputTokens: 42,
  usd: 0.01,
  calls: 3,
  wallMs: 10,
};

export function done(outcome: Outcome, usage: TurnUsage = USAGE): TurnEvent {
  return { type: "done", outcome, usage };
}
/** A `done` of a turn where no agent produced anything. */
export function failedDone(outcome: Outcome, usage: TurnUsage = USAGE): TurnEvent {
  return { type: "done", outcome, usage, failed: true };
}
export const answer = (text: string): Outcome => ({ kind: "answer", text });
export const progress = (text: string): TurnEvent => ({ type: "progress", text });
export const delta = (text: string): TurnEvent => ({ type: "answer_delta", text });

/** A small answer turn: two progress lines, the answer in two deltas, done. */
export const ANSWER_TURN: readonly TurnEvent[] = [
  progress("consulting a, b"),
  progress("a finished · 1.0s"),
  delta("The answer "),
  delta("is 42."),
  done(answer("The answer is 42.")),
];

type Step = { event: TurnEvent } | { error: Error } | { end: true };

/**
 * A fake council whose events the test feeds one at a time (`push`), so a test decides exactly
 * when each event happens relative to what it reads from the wire.
 */
export class ScriptedTurn {
  readonly requests: TurnRequest[] = [];
  readonly signals: AbortSignal[] = [];
  /** Set when the generator ran its `finally` (the turn was ended or returned). */
  returned = false;
  #returned = Promise.withResolvers<void>();
  #steps: Step[] = [];
  #wake: (() => void) | undefined;
  #called = Promise.withResolvers<void>();

  /** Resolves when the generator has run its `finally`. */
  get finished(): Promise<void> {
    return this.#returned.promise;
  }

  /** Resolves once the handler has called runTurn. */
  get called(): Promise<void> {
    return this.#called.promise;
  }

  /** Queue events (they are yielded as soon as the consumer asks). */
  push(...events: TurnEvent[]): this {
    for (const event of events) this.#steps.push({ event });
    this.#wake?.();
    return this;
  }
  /** Make the generator throw (a council defect). */
  throw(error: Error): this {
    this.#steps.push({ error });
    this.#wake?.();
    return this;
  }
  /** Make the generator end without a `done` event. */
  end(): this {
    this.#steps.push({ end: true });
    this.#wake?.();
    return this;
  }

  readonly runTurn: RunTurn = (request, signal) => {
    this.requests.push(request);
    this.signals.push(signal);
    this.#called.resolve();
    return this.#generate(signal);
  };

  async *#generate(signal: AbortSignal): AsyncGenerator<TurnEvent> {
    try {
      for (;;) {
        while (this.#steps.length === 0) {
          if (signal.aborted) return;
          const woken = Promise.withResolvers<void>();
          this.#wake = woken.resolve;
          const onAbort = () => woken.resolve();
          signal.addEventListener("abort", onAbort, { once: true });
          await woken.promise;
          signal.removeEventListener("abort", onAbort);
          this.#wake = undefined;
        }
        const step = this.#steps.shift()!;
        if ("error" in step) throw step.error;
        if ("end" in step) return;
        yield step.event;
        if (step.event.type === "done") return;
      }
    } finally {
      this.returned = true;
      this.#returned.resolve();
    }
  }
}

/** A RunTurn that yields a fixed list of events, recording the requests it saw. */
export function fixedTurn(events: readonly TurnEvent[], seen: TurnRequest[] = []): RunTurn {
  return async function* (request) {
    seen.push(request);
    for (const event of events) {
      await Promise.resolve();
      yield event;
    }
  };
}

export function deps(runTurn: RunTurn, extra: Partial<ProtocolDeps> = {}): ProtocolDeps {
  return { runTurn, streamProgress: true, keepAliveMs: 3000, passApiKeys: false, ...extra };
}

/** The Hono app of the tests: JSON body parsed (malformed → 400), then the protocol handler. */
export function testApp(protocolDeps: ProtocolDeps): Hono {
  const messages = createMessagesHandler(protocolDeps);
  const responses = createResponsesHandler(protocolDeps);
  const app = new Hono();
  const parse = async (request: Request): Promise<unknown> => {
    try {
      return await request.json();
    } catch {
      return undefined;
    }
  };
  app.post("/v1/messages", async (c) => {
    const body = await parse(c.req.raw);
    return body === undefined ? c.json({ error: "malformed" }, 400) : messages(c, body);
  });
  app.post("/v1/responses", async (c) => {
    const body = await parse(c.req.raw);
    return body === undefined ? c.json({ error: "malformed" }, 400) : responses(c, body);
  });
  return app;
}

export interface TestServer extends AsyncDisposable {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
}

/** A real server on an ephemeral port running the test app. */
export function serve(protocolDeps: ProtocolDeps): TestServer {
  const app = testApp(protocolDeps);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

export function post(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    ...init,
    headers: { "content-type": "application/json", ...init.headers },
    body: JSON.stringify(body),
  });
}

/**
 * Asserts the Messages stream grammar on decoded frames: every frame names its event and the
 * name equals `type`; message_start first; blocks strictly sequential with consecutive indices,
 * deltas only to the open block; message_delta (with usage) then message_stop last. Pings and a
 * final error are allowed anywhere.
 */
// deno-lint-ignore no-explicit-any
export function assertMessagesGrammar(frames: { event: string | undefined; data: any }[]): void {
  const fail = (why: string, i: number) => {
    throw new Error(`frame ${i} (${frames[i]?.event}): ${why}`);
  };
  let open: number | undefined;
  let next = 0;
  let sawDelta = false;
  let stopped = false;
  frames.forEach((frame, i) => {
    if (!frame.event) fail("missing event: line", i);
    if (frame.event !== frame.data?.type) fail(`event name != data.type ${frame.data?.type}`, i);
    if (stopped) fail("frame after message_stop", i);
    if (i === 0 && frame.event !== "message_start") fail("first frame must be message_start", i);
    switch (frame.event) {
      case "message_start":
        if (i !== 0) fail("second message_start", i);
        if (!(frame.data.message.usage.input_tokens > 0)) fail("input_tokens must be > 0", i);
        break;
      case "content_block_start":
        if (open !== undefined) fail("a block is already open", i);
        if (frame.data.index !== next) fail(`expected index ${next}`, i);
        open = frame.data.index;
        break;
      case "content_block_delta":
        if (frame.data.index !== open) fail("delta to a block that is not open", i);
        break;
      case "content_block_stop":
        if (frame.data.index !== open) fail("stop of a block that is not open", i);
        open = undefined;
        next++;
        break;
      case "message_delta":
        if (open !== undefined) fail("message_delta with an open block", i);
        if (typeof frame.data.usage?.output_tokens !== "number") fail("usage.output_tokens", i);
        sawDelta = true;
        break;
      case "message_stop":
        if (!sawDelta) fail("message_stop before message_delta", i);
        stopped = true;
        break;
      case "ping":
      case "error":
        break;
      default:
        fail("unknown event", i);
    }
  });
}

/**
 * Asserts the Responses stream grammar on decoded frames: `type` on every event (equal to the
 * `event:` name), `sequence_number` 0, 1, 2, …; created first and a terminal event last; items
 * added at the next output_index and closed before the next opens; deltas only to the open item
 * with its id; `output_item.done` carrying the complete item (the text of its deltas); and
 * `response.completed` listing exactly the done items. No top-level `error` key anywhere.
 */
// deno-lint-ignore no-explicit-any
export function assertResponsesGrammar(frames: { event: string | undefined; data: any }[]): void {
  const fail = (why: string, i: number) => {
    throw new Error(`event ${i} (${frames[i]?.data?.type}): ${why}`);
  };
  // deno-lint-ignore no-explicit-any
  const doneItems: any[] = [];
  let open: { id: string; index: number; text: string } | undefined;
  let terminal = false;
  frames.forEach((frame, i) => {
    const data = frame.data;
    if (frame.event !== data.type) fail("event name != type", i);
    if (data.sequence_number !== i) fail(`sequence_number ${data.sequence_number} != ${i}`, i);
    if ("error" in data) fail("top-level error key", i);
    if (terminal) fail("event after the terminal event", i);
    if (i === 0 && data.type !== "response.created") {
      fail("first event must be response.created", i);
    }
    const at = () => {
      if (!open || data.item_id !== open.id || data.output_index !== open.index) {
        fail("event for an item that is not open", i);
      }
    };
    switch (data.type) {
      case "response.created":
      case "response.in_progress":
        if (data.response.status !== "in_progress") fail("status", i);
        break;
      case "response.output_item.added":
        if (open) fail("an item is already open", i);
        if (data.output_index !== doneItems.length) fail("output_index not the next", i);
        open = { id: data.item.id, index: data.output_index, text: "" };
        break;
      case "response.reasoning_summary_part.added":
      case "response.content_part.added":
        at();
        break;
      case "response.reasoning_summary_text.delta":
      case "response.output_text.delta":
        at();
        open!.text += data.delta;
        break;
      case "response.reasoning_summary_text.done":
      case "response.output_text.done":
        at();
        if (data.text !== open!.text) fail("done text != deltas", i);
        break;
      case "response.reasoning_summary_part.done":
      case "response.content_part.done":
        at();
        if (data.part.text !== open!.text) fail("part text != deltas", i);
        break;
      case "response.output_item.done": {
        if (!open || data.item.id !== open.id || data.output_index !== open.index) {
          fail("done for an item that is not open", i);
        }
        const item = data.item;
        const text = item.type === "message" ? item.content?.[0]?.text : item.summary?.[0]?.text;
        if (text !== open!.text) fail("output_item.done is not the complete item", i);
        if (item.type === "message" && item.status !== "completed") fail("message status", i);
        doneItems.push(item);
        open = undefined;
        break;
      }
      case "response.completed":
        if (open) fail("completed with an open item", i);
        if (JSON.stringify(data.response.output) !== JSON.stringify(doneItems)) {
          fail("completed output != done items", i);
        }
        for (const key of ["input_tokens", "output_tokens", "total_tokens"]) {
          if (typeof data.response.usage?.[key] !== "number") fail(`usage.${key}`, i);
        }
        terminal = true;
        break;
      case "response.failed":
        if (data.response.status !== "failed" || !data.response.error?.code) fail("error", i);
        terminal = true;
        break;
      default:
        fail("unexpected event", i);
    }
  });
  if (!terminal) throw new Error("stream has no terminal event");
}
