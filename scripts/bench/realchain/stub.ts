/**
 * The real-chain bench's model upstream: one local server that speaks Anthropic Messages
 * (claude), OpenAI Responses (codex) and Gemini generateContent / streamGenerateContent (gemini),
 * answers each council prompt in the shape the gateway asks for, after a set delay or at once,
 * fails on command (an HTTP status such as 500, 503 or 529, or a hang), and records when every
 * request arrived and when its reply was written.
 */

/** Which CLI a request came from, by the protocol it speaks. */
export type Vendor = "claude" | "codex" | "gemini";

/** What the gateway asked, told apart by the section titles of its prompts. */
export type PromptKind = "answer" | "action" | "synthesis" | "selection" | "other";

/** How the stub treats one vendor's requests. */
export interface Behaviour {
  /** Wait this long before replying (model time). */
  delayMs: number;
  /** Reply with this HTTP status instead of an answer, or never reply ("hang"). */
  fail?: number | "hang";
}

/** One request as the stub saw it; times are epoch milliseconds with sub-ms precision. */
export interface StubRecord {
  vendor: Vendor;
  path: string;
  kind: PromptKind;
  /** The CLI process's own session header, when it sends one (tells a child from the synth). */
  session?: string;
  /** The stamping wrapper's pid (its `x-realchain-pid` header), when the request carries it. */
  pid?: number;
  status: number;
  arrivedAt: number;
  /** When the last byte of the reply was handed to the socket (NaN while hanging). */
  repliedAt: number;
}

export interface ChainStub {
  origin: string;
  records: StubRecord[];
  /** Sets how `vendor`'s requests are treated from now on. */
  behave(vendor: Vendor, behaviour: Behaviour): void;
  close(): Promise<void>;
}

/** Epoch time in ms, with performance.now()'s precision. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The kind of council prompt a request body carries (matched on the raw JSON text). */
export function promptKind(body: string): PromptKind {
  if (body.includes("=== Candidate replies ===")) return "synthesis";
  if (body.includes("=== Proposed next steps ===")) return "selection";
  if (body.includes("=== Tools the assistant may call ===")) return "action";
  if (body.includes("=== Your task ===") || body.includes("=== Conversation")) return "answer";
  return "other";
}

/** The file each vendor proposes to read on an action turn: three different proposals. */
export function proposedFile(vendor: Vendor): string {
  return `notes-${vendor}.txt`;
}

/** The reply text for a prompt: a draft, a proposal, a pick, or the final answer. */
export function replyText(vendor: Vendor, kind: PromptKind): string {
  switch (kind) {
    case "action":
      return JSON.stringify({
        kind: "tool",
        name: "Read",
        input: { file_path: `/tmp/${proposedFile(vendor)}` },
      });
    case "selection":
      return '{"choose": 1}';
    case "synthesis":
      return "Final answer from the synthesizer.";
    default:
      return `Draft answer from ${vendor}.`;
  }
}

const encoder = new TextEncoder();

function sse(events: [string | undefined, unknown][]): string {
  return events.map(([event, data]) =>
    `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`
  ).join("");
}

function anthropicReply(text: string, model: string, stream: boolean): Response {
  const message = {
    id: "msg_realchain",
    type: "message",
    role: "assistant",
    model,
    content: [] as unknown[],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 1 },
  };
  if (!stream) {
    return Response.json({
      ...message,
      content: [{ type: "text", text }],
      stop_reason: "end_turn",
      usage: { input_tokens: 100, output_tokens: 10 },
    });
  }
  return sseResponse(sse([
    ["message_start", { type: "message_start", message }],
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
      usage: { output_tokens: 10 },
    }],
    ["message_stop", { type: "message_stop" }],
  ]));
}

function responsesReply(text: string, model: string): Response {
  const item = {
    id: "msg_realchain",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  const response = { id: "resp_realchain", object: "response", model, output: [item] };
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 110,
  };
  return sseResponse(sse([
    ["response.created", {
      type: "response.created",
      response: { ...response, status: "in_progress", output: [] },
    }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", {
      type: "response.completed",
      response: { ...response, status: "completed", usage },
    }],
  ]));
}

function geminiReply(text: string, stream: boolean): Response {
  const chunk = {
    candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0, finishReason: "STOP" }],
    modelVersion: "gemini-realchain",
    responseId: "realchain",
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
  };
  return stream ? sseResponse(sse([[undefined, chunk]])) : Response.json(chunk);
}

function sseResponse(body: string): Response {
  return new Response(encoder.encode(body), { headers: { "content-type": "text/event-stream" } });
}

function errorReply(vendor: Vendor, status: number): Response {
  const message = `realchain stub: failing with ${status} on command`;
  const body = vendor === "claude"
    ? {
      type: "error",
      error: { type: status === 529 ? "overloaded_error" : "api_error", message },
    }
    : vendor === "codex"
    ? { error: { message, type: "server_error", code: null } }
    : { error: { code: status, message, status: "UNAVAILABLE" } };
  return Response.json(body, { status });
}

/** The vendor a request path belongs to, or undefined (then 404). */
export function vendorOf(method: string, path: string): Vendor | undefined {
  if (method !== "POST") return undefined;
  if (path === "/v1/messages") return "claude";
  if (path === "/v1/responses") return "codex";
  if (/^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path)) return "gemini";
  return undefined;
}

function modelOf(vendor: Vendor, path: string, body: Record<string, unknown>): string {
  if (vendor === "gemini") return /models\/([^/:]+)/.exec(path)?.[1] ?? "gemini";
  return typeof body.model === "string" ? body.model : vendor;
}

/** Starts the stub on a free loopback port. */
export function startChainStub(
  initial: Partial<Record<Vendor, Behaviour>> = {},
): ChainStub {
  const behaviours = new Map<Vendor, Behaviour>();
  for (const vendor of ["claude", "codex", "gemini"] as const) {
    behaviours.set(vendor, initial[vendor] ?? { delayMs: 0 });
  }
  const records: StubRecord[] = [];
  const hanging = new Set<() => void>();

  const handle = async (request: Request): Promise<Response> => {
    const arrivedAt = epochNow();
    const url = new URL(request.url);
    const vendor = vendorOf(request.method, url.pathname);
    if (request.method === "HEAD") return new Response(null, { status: 200 });
    if (url.pathname.endsWith("/count_tokens")) return Response.json({ input_tokens: 100 });
    if (!vendor) return new Response("not found", { status: 404 });
    const raw = await request.text();
    const kind = promptKind(raw);
    const behaviour = behaviours.get(vendor)!;
    const record: StubRecord = {
      vendor,
      path: url.pathname,
      kind,
      session: request.headers.get("x-claude-code-session-id") ??
        request.headers.get("session-id") ?? undefined,
      pid: Number(request.headers.get("x-realchain-pid")) || undefined,
      status: 0,
      arrivedAt,
      repliedAt: NaN,
    };
    records.push(record);
    if (behaviour.fail === "hang") {
      // Held until the client gives up or the stub closes; nothing is ever sent.
      await new Promise<void>((resolve) => {
        hanging.add(resolve);
        request.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return new Response(null, { status: 504 });
    }
    if (behaviour.delayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw);
    } catch { /* an empty or odd body still gets an answer */ }
    const response = typeof behaviour.fail === "number"
      ? errorReply(vendor, behaviour.fail)
      : vendor === "claude"
      ? anthropicReply(replyText(vendor, kind), modelOf(vendor, url.pathname, body), !!body.stream)
      : vendor === "codex"
      ? responsesReply(replyText(vendor, kind), modelOf(vendor, url.pathname, body))
      : geminiReply(replyText(vendor, kind), url.pathname.includes(":stream"));
    record.status = response.status;
    record.repliedAt = epochNow();
    return response;
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    records,
    behave: (vendor, behaviour) => behaviours.set(vendor, behaviour),
    close: async () => {
      for (const release of hanging) release();
      await server.shutdown();
    },
  };
}
