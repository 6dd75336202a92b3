/**
 * An Anthropic Messages endpoint that works a task the way a model does: it narrates ("Let me
 * look first."), asks for a tool, and once the tool's result comes back streams its answer in
 * chunks, optionally pausing before the last chunk until the test releases it.
 */

export interface NarratingStubOptions {
  narration: string;
  tool: { name: string; input: Record<string, unknown> };
  /** The answer, streamed as these chunks after the tool result arrives. */
  answer: string[];
  /** When set, the last answer chunk waits for this promise. */
  hold?: Promise<unknown>;
}

export interface NarratingStub extends AsyncDisposable {
  url: string;
  /** Requests with a tool result in their last user message (the answering calls). */
  readonly answered: number;
  /** Resolves once the answer's last chunk was sent. */
  finished: Promise<void>;
}

type Block = Record<string, unknown>;

function event(name: string, data: Record<string, unknown>): string {
  return `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
}

function message(model: string) {
  return {
    id: `msg_${crypto.randomUUID().slice(0, 8)}`,
    type: "message",
    role: "assistant",
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 1 },
  };
}

function blockEvents(index: number, block: Block, deltas: Block[]): string[] {
  return [
    event("content_block_start", { index, content_block: block }),
    ...deltas.map((delta) => event("content_block_delta", { index, delta })),
    event("content_block_stop", { index }),
  ];
}

function end(stopReason: string): string[] {
  return [
    event("message_delta", {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 30 },
    }),
    event("message_stop", {}),
  ];
}

function hasToolResult(body: { messages?: { role: string; content: unknown }[] }): boolean {
  const last = body.messages?.findLast((m) => m.role === "user");
  return Array.isArray(last?.content) &&
    last.content.some((b: { type?: string }) => b?.type === "tool_result");
}

export function startNarratingStub(options: NarratingStubOptions): NarratingStub {
  const encoder = new TextEncoder();
  let answered = 0;
  const finished = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/v1/messages")) {
      return new Response("not found", { status: 404 });
    }
    const body = await req.json();
    const head = event("message_start", { message: message(body.model) });
    if (!hasToolResult(body)) {
      const sse = [
        head,
        ...blockEvents(0, { type: "text", text: "" }, [
          { type: "text_delta", text: options.narration },
        ]),
        ...blockEvents(1, {
          type: "tool_use",
          id: "toolu_stub_1",
          name: options.tool.name,
          input: {},
        }, [{ type: "input_json_delta", partial_json: JSON.stringify(options.tool.input) }]),
        ...end("tool_use"),
      ].join("");
      return new Response(sse, { headers: { "content-type": "text/event-stream" } });
    }
    answered++;
    const chunks = options.answer;
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (text: string) => controller.enqueue(encoder.encode(text));
        send(
          head +
            event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        );
        for (const [i, text] of chunks.entries()) {
          if (i === chunks.length - 1 && options.hold) await options.hold;
          send(event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }));
        }
        send(event("content_block_stop", { index: 0 }) + end("end_turn").join(""));
        controller.close();
        finished.resolve();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get answered() {
      return answered;
    },
    finished: finished.promise,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
