/**
 * The peer comparison's upstream: a stand-in Anthropic Messages API that streams the same fixed
 * 500-token answer to every `POST /v1/messages` (one SSE event per token, each its own write),
 * as fast as it can or paced, and lists one model at `GET /v1/models`. Paced, each token carries
 * the epoch time (µs) it was written at, `t7@1763712000123456`, so a client can tell how long
 * it took to arrive. Run as a subprocess; prints its origin.
 *
 *   deno run --allow-net scripts/bench/stub_upstream.ts [--gap-ms N --group K]
 */

/** The answer's tokens: 500 text deltas. */
export const STUB_TOKENS = 500;

/** Delta `i` of the fixed answer, stamped with its write time (µs) when paced. */
export function stubToken(i: number, stampUs?: number): string {
  return stampUs === undefined ? ` t${i}` : ` t${i}@${stampUs}`;
}

/** The whole fixed answer (stamps removed), as a client joining every delta sees it. */
export const STUB_ANSWER = Array.from({ length: STUB_TOKENS }, (_, i) => stubToken(i)).join("");

/** An answer with its stamps removed. */
export function unstamped(answer: string): string {
  return answer.replace(/@\d+/g, "");
}

/** How the stub paces its answer: `gapMs` between groups of `group` tokens (0: no pauses). */
export interface Pace {
  gapMs: number;
  group: number;
}

/** Reads `--gap-ms N --group K` (default: no pauses). */
export function paceOf(args: readonly string[]): Pace {
  const value = (flag: string, fallback: number) => {
    const i = args.indexOf(flag);
    const n = i === -1 ? NaN : Number(args[i + 1]);
    return Number.isFinite(n) && n >= 0 ? n : fallback;
  };
  return { gapMs: value("--gap-ms", 0), group: Math.max(1, value("--group", 1)) };
}

const encoder = new TextEncoder();

function frame(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function tokenFrame(i: number, stampUs?: number): Uint8Array {
  return frame("content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: stubToken(i, stampUs) },
  });
}

const LEAD = [
  frame("message_start", {
    type: "message_start",
    message: {
      id: "msg_stub",
      type: "message",
      role: "assistant",
      content: [],
      model: "stub-model",
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1000, output_tokens: 1 },
    },
  }),
  frame("content_block_start", {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "" },
  }),
];
const TAIL = [
  frame("content_block_stop", { type: "content_block_stop", index: 0 }),
  frame("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: STUB_TOKENS },
  }),
  frame("message_stop", { type: "message_stop" }),
];
/** Unpaced, every frame is the same each time: encoded once. */
const BURST = [...LEAD, ...Array.from({ length: STUB_TOKENS }, (_, i) => tokenFrame(i)), ...TAIL];

/** Epoch time in µs, with performance.now()'s precision. */
function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** The reply's frames one write at a time; paced, a pause before each group after the first. */
async function* replyFrames(pace: Pace): AsyncGenerator<Uint8Array> {
  if (pace.gapMs === 0) return yield* BURST;
  yield* LEAD;
  for (let i = 0; i < STUB_TOKENS; i++) {
    if (i > 0 && i % pace.group === 0) {
      await new Promise((resolve) => setTimeout(resolve, pace.gapMs));
    }
    yield tokenFrame(i, nowUs());
  }
  yield* TAIL;
}

if (import.meta.main) {
  const pace = paceOf(Deno.args);
  const models = JSON.stringify({
    data: [{ type: "model", id: "stub-model", display_name: "Stub", created_at: "" }],
    has_more: false,
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = new URL(request.url).pathname;
      if (request.method === "GET" && path === "/v1/models") {
        return new Response(models, { headers: { "content-type": "application/json" } });
      }
      if (request.method !== "POST" || path !== "/v1/messages") {
        return new Response("not found", { status: 404 });
      }
      await request.arrayBuffer();
      const frames = replyFrames(pace);
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await frames.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  );
  console.log(`listening on http://127.0.0.1:${server.addr.port}`);
  await server.finished;
}
