/**
 * A stub model upstream that answers the four APIs children speak (Anthropic Messages, OpenAI
 * Chat Completions and Responses, Gemini) with a scripted reply and reports cache reads and
 * writes as the real API would (prompt_cache.ts), recording each call: its size, its cache
 * reading, and how much of it repeats the same caller's previous call. Runs in-process on
 * 127.0.0.1:0.
 */
import {
  anthropicBlocks,
  AutomaticCache,
  type CacheReading,
  ExplicitCache,
  geminiText,
  openaiText,
} from "../../tests/support/fake_vendor/prompt_cache.ts";

export type UpstreamApi = "anthropic" | "openai" | "responses" | "gemini";

/** Callers name themselves with this header (an HTTP agent's `headers`); CLIs are told apart by API. */
export const CALLER_HEADER = "x-bench-caller";

export interface UpstreamCall {
  api: UpstreamApi;
  model: string;
  caller: string;
  /** The request body's size in bytes. */
  bytes: number;
  /** The prompt's characters as the cache reads them. */
  promptChars: number;
  cache: CacheReading;
  /** Characters at the start of the prompt identical to the same caller's previous call. */
  repeatedChars: number;
  /** The prompt text as the cache read it (for comparisons). */
  text: string;
}

export interface CacheUpstream extends AsyncDisposable {
  origin: string;
  calls: UpstreamCall[];
}

/** What to answer: the reply text for a call (its prompt text is `call.text`). */
export type ReplyScript = (call: UpstreamCall) => string;

const encoder = new TextEncoder();
type Json = Record<string, unknown>;

function sse(events: [string | undefined, unknown][]): Response {
  const text = events.map(([event, data]) =>
    `${event ? `event: ${event}\n` : ""}data: ${
      typeof data === "string" ? data : JSON.stringify(data)
    }\n\n`
  ).join("");
  return new Response(encoder.encode(text), { headers: { "content-type": "text/event-stream" } });
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const OUTPUT_TOKENS = 50;
/** The Messages API refuses more cache breakpoints than this. */
const MAX_BREAKPOINTS = 4;

function anthropicReply(call: UpstreamCall, text: string, stream: boolean): Response {
  const usage = {
    input_tokens: call.cache.total - call.cache.read - call.cache.write,
    cache_read_input_tokens: call.cache.read,
    cache_creation_input_tokens: call.cache.write,
    output_tokens: OUTPUT_TOKENS,
  };
  const message = { id: "msg_cache_stub", type: "message", role: "assistant", model: call.model };
  if (!stream) {
    return Response.json({
      ...message,
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      usage,
    });
  }
  return sse([
    ["message_start", {
      type: "message_start",
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }],
    ["content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }],
    ["content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text },
    }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: OUTPUT_TOKENS },
    }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

function openaiReply(call: UpstreamCall, text: string): Response {
  const chunk = (choices: unknown[], extra: Json = {}) => ({
    id: "chatcmpl-cache-stub",
    object: "chat.completion.chunk",
    model: call.model,
    choices,
    ...extra,
  });
  return sse([
    [undefined, chunk([{ index: 0, delta: { role: "assistant", content: text } }])],
    [undefined, chunk([{ index: 0, delta: {}, finish_reason: "stop" }])],
    [
      undefined,
      chunk([], {
        usage: {
          prompt_tokens: call.cache.total,
          completion_tokens: OUTPUT_TOKENS,
          total_tokens: call.cache.total + OUTPUT_TOKENS,
          prompt_tokens_details: { cached_tokens: call.cache.read },
        },
      }),
    ],
    [undefined, "[DONE]"],
  ]);
}

function responsesReply(call: UpstreamCall, text: string): Response {
  const item = {
    id: "msg_cache_stub",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  const response = { id: "resp_cache_stub", object: "response", model: call.model };
  const usage = {
    input_tokens: call.cache.total,
    input_tokens_details: { cached_tokens: call.cache.read },
    output_tokens: OUTPUT_TOKENS,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: call.cache.total + OUTPUT_TOKENS,
  };
  return sse([
    ["response.created", {
      type: "response.created",
      response: { ...response, status: "in_progress", output: [] },
    }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", {
      type: "response.completed",
      response: { ...response, status: "completed", output: [item], usage },
    }],
  ]);
}

function geminiReply(call: UpstreamCall, text: string): Response {
  return sse([[undefined, {
    candidates: [{
      content: { parts: [{ text }], role: "model" },
      index: 0,
      finishReason: "STOP",
    }],
    modelVersion: call.model,
    usageMetadata: {
      promptTokenCount: call.cache.total,
      candidatesTokenCount: OUTPUT_TOKENS,
      totalTokenCount: call.cache.total + OUTPUT_TOKENS,
      cachedContentTokenCount: call.cache.read,
    },
  }]]);
}

/** Which API a request is for, and its model (Gemini names it in the path). */
function route(
  method: string,
  path: string,
  body: Json,
): { api: UpstreamApi; model: string } | undefined {
  if (method !== "POST") return undefined;
  if (/\/v1\/messages$/.test(path)) return { api: "anthropic", model: String(body.model) };
  if (/\/chat\/completions$/.test(path)) return { api: "openai", model: String(body.model) };
  if (/\/responses$/.test(path)) return { api: "responses", model: String(body.model) };
  const gemini = /\/models\/([^/:]+):(?:stream)?generateContent$/i.exec(path);
  return gemini ? { api: "gemini", model: gemini[1] } : undefined;
}

/** Starts the stub; dispose it to stop. */
export function startCacheUpstream(reply: ReplyScript): CacheUpstream {
  const calls: UpstreamCall[] = [];
  const explicit = new ExplicitCache();
  const automatic = new AutomaticCache();
  const previous = new Map<string, string>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const raw = await req.text();
    let body: Json = {};
    try {
      body = JSON.parse(raw || "{}");
    } catch { /* not JSON: unrouted below */ }
    const where = route(req.method, url.pathname, body);
    if (!where) return new Response("not found", { status: 404 });
    const blocks = where.api === "anthropic" ? anthropicBlocks(body) : [];
    const breakpoints = blocks.filter((b) => b.breakpoint).length;
    if (breakpoints > MAX_BREAKPOINTS) {
      // As the Messages API refuses it.
      return Response.json({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. ` +
            `Found ${breakpoints}.`,
        },
      }, { status: 400 });
    }
    const text = where.api === "anthropic"
      ? blocks.map((b) => b.text).join("")
      : where.api === "gemini"
      ? geminiText(body)
      : openaiText(body);
    const cache = where.api === "anthropic"
      ? explicit.use(where.model, blocks)
      : automatic.use(where.model, text);
    const caller = req.headers.get(CALLER_HEADER) ?? where.api;
    const key = `${caller}\u0000${where.api}\u0000${where.model}`;
    const call: UpstreamCall = {
      ...where,
      caller,
      bytes: encoder.encode(raw).length,
      promptChars: text.length,
      cache,
      repeatedChars: commonPrefix(previous.get(key) ?? "", text),
      text,
    };
    previous.set(key, text);
    calls.push(call);
    const answer = reply(call);
    switch (where.api) {
      case "anthropic":
        return anthropicReply(call, answer, body.stream === true);
      case "openai":
        return openaiReply(call, answer);
      case "responses":
        return responsesReply(call, answer);
      case "gemini":
        return geminiReply(call, answer);
    }
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    calls,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
