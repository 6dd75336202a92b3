/**
 * Hand-made model API replies for tests of odd streams: the fake vendor API (fake_vendor/) with
 * each reply built by the test (truncated, hanging, gated, malformed), builders of the Anthropic
 * Messages and OpenAI Chat Completions SSE texts, and HTTP agent configs pointing at it.
 */
import { type AgentConfig, AgentSchema, type HttpRunner } from "../../src/config/mod.ts";
import { type FakeVendor, type RecordedRequest, startFakeVendor } from "./fake_vendor/mod.ts";

/** A request as the stub saw it (the fake vendor's record). */
export type SeenRequest = RecordedRequest;

/** A synthesizer's prompt on an answer turn is the only one that shows candidates. */
export const SYNTH_MARK = "=== Candidate A ===";

/** Whether a request is a synthesizer's (its whole body holds the candidates). */
export function isSynthesis(request: SeenRequest): boolean {
  return JSON.stringify(request.body).includes(SYNTH_MARK);
}

/** What the stub answers a request with, given the request and its number (0-based). */
export type StubHandler = (
  request: SeenRequest,
  index: number,
) => Response | Promise<Response>;

export type Stub = FakeVendor;

const encoder = new TextEncoder();

/** The fake vendor API answering every request with `handler`'s own response. */
export function startStub(handler: StubHandler): Stub {
  return startFakeVendor({
    rules: [{
      match: {},
      answer: (request) => ({ response: () => handler(request, request.index) }),
    }],
  });
}

/** An SSE frame. */
export function frame(event: string | undefined, data: unknown): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`;
}

/** A `text/event-stream` response sending `chunks` and then, unless `hang`, its end. */
export function sseResponse(chunks: string[], options: { hang?: boolean } = {}): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      if (!options.hang) controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/**
 * A stream in two parts: `before` is sent at once, `after` (as one write) only once `release` is
 * called — so a test can see the first part arrive while the rest is not even sent.
 */
export function gatedResponse(before: string[], after: string[]): {
  response: Response;
  release: () => void;
} {
  let release = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of before) controller.enqueue(encoder.encode(chunk));
      release = () => {
        controller.enqueue(encoder.encode(after.join("")));
        controller.close();
      };
    },
  });
  return {
    response: new Response(body, { headers: { "content-type": "text/event-stream" } }),
    release: () => release(),
  };
}

export function jsonResponse(status: number, body: unknown, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...Object.fromEntries(new Headers(headers)) },
  });
}

export interface StreamUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** An Anthropic Messages stream: message_start (input usage), text deltas, usage, stop. */
export function anthropicFrames(
  texts: string[],
  usage: StreamUsage,
  options: { stop?: boolean; stopReason?: string } = {},
): string[] {
  return [
    frame("message_start", {
      type: "message_start",
      message: {
        id: "msg_stub",
        type: "message",
        role: "assistant",
        content: [],
        model: "stub",
        stop_reason: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          ...(usage.cacheRead ? { cache_read_input_tokens: usage.cacheRead } : {}),
          ...(usage.cacheWrite ? { cache_creation_input_tokens: usage.cacheWrite } : {}),
        },
      },
    }),
    frame("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    frame("ping", { type: "ping" }),
    ...texts.map((text) =>
      frame("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      })
    ),
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    frame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: options.stopReason ?? "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
    ...(options.stop === false ? [] : [frame("message_stop", { type: "message_stop" })]),
  ];
}

/** An OpenAI Chat Completions stream: role, content deltas, finish, usage chunk, [DONE]. */
export function openaiFrames(
  texts: string[],
  usage: StreamUsage | undefined,
  options: { done?: boolean; finishReason?: string } = {},
): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    frame(undefined, {
      id: "chatcmpl-stub",
      object: "chat.completion.chunk",
      created: 1,
      model: "stub",
      choices,
      ...extra,
    });
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    ...texts.map((text) => chunk([{ index: 0, delta: { content: text }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: options.finishReason ?? "stop" }]),
    ...(usage
      ? [chunk([], {
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
          ...(usage.cacheRead !== undefined
            ? { prompt_tokens_details: { cached_tokens: usage.cacheRead } }
            : {}),
        },
      })]
      : []),
    ...(options.done === false ? [] : ["data: [DONE]\n\n"]),
  ];
}

/** An HTTP agent config pointing at a stub. */
export function httpAgent(
  runner: HttpRunner,
  baseUrl: string,
  overrides: Partial<AgentConfig> = {},
): AgentConfig {
  const entry = AgentSchema.parse({
    runner,
    model: runner === "anthropic" ? "claude-sonnet-4-5" : "gpt-5-mini",
    baseUrl,
    timeoutMs: 60_000,
    ...overrides,
    name: undefined,
  });
  return { ...entry, name: overrides.name ?? `http-${runner}` };
}

/** A port nothing listens on (bound, then released). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
