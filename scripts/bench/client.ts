/**
 * The bench's HTTP client: a streaming Messages request timed from send to first byte and to
 * `message_stop`, with every SSE frame parsed as it arrives (tests/support/sse_reader.ts); plus an epoch offset with sub-ms
 * precision for comparing receive times with the fakes' `$EPOCHREALTIME` stamps.
 */
import { SseDecoder, type SseRecord } from "../../tests/support/sse_reader.ts";

/**
 * The offset that turns a `performance.now()` reading into epoch milliseconds with its sub-ms
 * precision: taken the moment Date.now() ticks over to a new millisecond. Take it again before
 * each measurement (the two clocks drift apart slowly).
 */
export function epochOffset(): number {
  const start = Date.now();
  let now = start;
  while (now === start) now = Date.now();
  return now - performance.now();
}

/** A realistic-sized system prompt (~8 KB), the same on every request. */
export const SYSTEM_PROMPT = Array.from(
  { length: 80 },
  (_, i) => `Guideline ${i + 1}: keep answers short, cite files by path, and prefer small diffs.`,
).join("\n");

/** A streaming Messages request body for one user ask. */
export function messagesBody(ask: string, stream = true): Record<string, unknown> {
  return {
    model: "svc-council",
    max_tokens: 4096,
    stream,
    system: SYSTEM_PROMPT,
    messages: [{ role: "user", content: ask }],
  };
}

export interface StreamedTurn {
  status: number;
  /** Request sent → first body byte, ms. */
  firstByteMs: number;
  /** Request sent → end of the body, ms. */
  wallMs: number;
  /** The answer: every text_delta joined. */
  answer: string;
  /** message_stop arrived. */
  stopped: boolean;
  /** Why the turn counts as failed (HTTP status, error event, no message_stop). */
  error?: string;
}

export interface StreamOptions {
  /** Called for each text_delta with `performance.now()` at the read that completed it. */
  onTextDelta?: (text: string, receivedAt: number) => void;
  /** Called for every SSE frame as it arrives. */
  onEvent?: (event: SseRecord) => void;
  headers?: Record<string, string>;
}

/** POSTs a streaming Messages request and reads the SSE reply to its end. */
export async function streamMessages(
  origin: string,
  body: Record<string, unknown>,
  options: StreamOptions = {},
): Promise<StreamedTurn> {
  const payload = JSON.stringify(body);
  const started = performance.now();
  let firstByte = NaN;
  let answer = "";
  let stopped = false;
  let error: string | undefined;
  let status = 0;
  try {
    const response = await fetch(`${origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", ...options.headers },
      body: payload,
    });
    status = response.status;
    if (!response.body) throw new Error("no body");
    const parser = new SseDecoder();
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      const at = performance.now();
      if (Number.isNaN(firstByte)) firstByte = at;
      for (const frame of parser.push(decoder.decode(chunk, { stream: true }))) {
        options.onEvent?.(frame);
        if (frame.event === "message_stop") stopped = true;
        else if (frame.event === "error") error = `error event: ${frame.text.slice(0, 200)}`;
        else if (frame.event === "content_block_delta") {
          const delta = frame.data?.delta;
          if (delta?.type === "text_delta") {
            answer += delta.text;
            options.onTextDelta?.(delta.text, at);
          }
        }
      }
    }
    if (status !== 200) error = `HTTP ${status}`;
    else if (!stopped && !error) error = "no message_stop";
  } catch (err) {
    error = `request failed: ${(err as Error).message}`;
  }
  const ended = performance.now();
  return {
    status,
    firstByteMs: firstByte - started,
    wallMs: ended - started,
    answer,
    stopped,
    error,
  };
}

/** Runs `count` calls of `work` with at most `concurrency` in flight; results in order. */
export async function pool<T>(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
  return results;
}
