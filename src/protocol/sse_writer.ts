/**
 * A Server-Sent Events response: frames written the moment they are sent (no buffering), a
 * keep-alive frame every `keepAliveMs`, and an abort signal that fires when the client leaves.
 */
import { getLogger } from "@logtape/logtape";
import type { Clock } from "../base/clock.ts";

const logger = getLogger(["council-gateway", "sse"]);
const encoder = new TextEncoder();

/** One SSE frame; `data` is serialised as JSON on a single `data:` line. */
export interface SseFrame {
  event: string;
  data: unknown;
}

export interface SseChannel {
  /** Writes frames at once. Returns false when the stream is already closed. */
  send(...frames: SseFrame[]): boolean;
  /** Aborted when the client disconnects or cancels the stream. */
  readonly signal: AbortSignal;
}

interface SseOptions {
  clock: Clock;
  keepAliveMs: number;
  /** Builds the keep-alive frame (called on every tick, so it may carry a sequence number). */
  keepAlive: () => SseFrame;
  /** The request's own signal; it aborts when the client goes away. */
  requestSignal?: AbortSignal;
  /** Produces the stream; the response ends when it settles. */
  run: (channel: SseChannel) => Promise<void>;
}

const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/** `event: <name>\ndata: <json>\n\n` — every frame names its event (clients dispatch on it). */
export function encodeFrame(frame: SseFrame): string {
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

/** Starts `run` behind a streaming Response and returns the Response immediately. */
export function sseResponse(options: SseOptions): Response {
  const { clock } = options;
  const disconnect = new AbortController();
  let closed = false;
  let timer: ReturnType<Clock["setInterval"]> | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const stopTimer = () => {
    if (timer !== undefined) clock.clearInterval(timer);
    timer = undefined;
  };
  const onRequestAbort = () => clientGone("request aborted");
  const cleanup = () => {
    stopTimer();
    options.requestSignal?.removeEventListener("abort", onRequestAbort);
  };
  function close() {
    try {
      controller.close();
    } catch { /* already closed or cancelled by the consumer */ }
  }
  function clientGone(why: string) {
    if (closed) return;
    closed = true;
    cleanup();
    close();
    logger.debug("SSE client gone: {why}", { why });
    disconnect.abort(new DOMException(why, "AbortError"));
  }
  function send(...frames: SseFrame[]): boolean {
    if (closed) return false;
    try {
      controller.enqueue(encoder.encode(frames.map(encodeFrame).join("")));
      return true;
    } catch {
      clientGone("write failed");
      return false;
    }
  }
  function finish() {
    if (closed) return;
    closed = true;
    cleanup();
    close();
  }

  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      if (options.requestSignal?.aborted) {
        clientGone("request aborted");
      } else {
        options.requestSignal?.addEventListener("abort", onRequestAbort, { once: true });
        timer = clock.setInterval(() => send(options.keepAlive()), options.keepAliveMs);
      }
      const channel: SseChannel = { send, signal: disconnect.signal };
      // Not awaited: the Response must be returned before the stream has anything to say.
      options.run(channel).catch((error) => {
        logger.error("SSE producer failed: {error}", { error: String(error) });
      }).finally(finish);
    },
    cancel() {
      clientGone("stream cancelled");
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
