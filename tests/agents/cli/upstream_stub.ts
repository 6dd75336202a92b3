/**
 * A stand-in for the vendors' model APIs behind real agent CLIs: Anthropic Messages (claude),
 * OpenAI Responses (codex) and Gemini streamGenerateContent (gemini) on one local port, each
 * streaming one fixed reply, with every request body kept for the test to inspect.
 */

export interface UpstreamRequest {
  path: string;
  body: Record<string, unknown>;
}

export interface Upstream extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` (claude's and gemini's base URL; codex's is `${origin}/v1`). */
  origin: string;
  requests: UpstreamRequest[];
}

const sse = (events: [string | undefined, unknown][]) =>
  new Response(
    events.map(([event, data]) =>
      `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`
    ).join(""),
    { headers: { "content-type": "text/event-stream" } },
  );

function anthropic(model: unknown, reply: string): Response {
  const message = {
    id: "msg_upstream",
    type: "message",
    role: "assistant",
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 30, output_tokens: 1 },
  };
  return sse([
    ["message_start", { type: "message_start", message }],
    ["content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }],
    ["content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: reply },
    }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 5 },
    }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

function responses(reply: string): Response {
  const item = {
    id: "msg_upstream",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: reply, annotations: [] }],
  };
  const response = { id: "resp_upstream", object: "response", status: "completed", output: [item] };
  const usage = {
    input_tokens: 30,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 35,
  };
  return sse([
    ["response.created", {
      type: "response.created",
      response: { ...response, status: "in_progress", output: [] },
    }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response: { ...response, usage } }],
  ]);
}

function gemini(reply: string): Response {
  return sse([[undefined, {
    candidates: [{
      content: { parts: [{ text: reply }], role: "model" },
      finishReason: "STOP",
      index: 0,
    }],
    usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 5, totalTokenCount: 35 },
    modelVersion: "gemini-2.5-flash",
  }]]);
}

/** Starts the upstream on 127.0.0.1:0; every model call streams `reply`. */
export function startUpstream(reply: string): Upstream {
  const requests: UpstreamRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const text = await req.text();
    let body: Record<string, unknown> = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch { /* kept empty */ }
    requests.push({ path, body });
    if (req.method !== "POST") return new Response("not found", { status: 404 });
    if (path === "/v1/messages") return anthropic(body.model, reply);
    if (path === "/v1/responses") return responses(reply);
    if (path.endsWith(":streamGenerateContent")) return gemini(reply);
    if (path.endsWith(":countTokens")) return Response.json({ totalTokens: 30 });
    return new Response("not found", { status: 404 });
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
