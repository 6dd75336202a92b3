/**
 * The fake vendor's Anthropic Messages wire format: a reply as a JSON message or as the SSE event
 * sequence (message_start … message_stop, text and tool_use blocks, usage with cache reads and
 * writes), and the API's error body for a failure.
 */
import type { Failure, Frame, Rendering } from "./reply.ts";

function usageOf(r: Rendering, output: number) {
  return {
    input_tokens: r.usage.input - r.usage.cacheRead - r.usage.cacheWrite,
    cache_read_input_tokens: r.usage.cacheRead,
    cache_creation_input_tokens: r.usage.cacheWrite,
    output_tokens: output,
  };
}

function stopReason(r: Rendering): string {
  return r.parts.some((p) => p.kind === "tool") ? "tool_use" : "end_turn";
}

function head(r: Rendering) {
  return { id: r.id, type: "message", role: "assistant", model: r.model };
}

/** The non-streamed message. */
export function messageJson(r: Rendering): unknown {
  return {
    ...head(r),
    content: r.parts.map((p) =>
      p.kind === "text"
        ? { type: "text", text: p.text }
        : { type: "tool_use", id: p.id, name: p.name, input: p.input }
    ),
    stop_reason: stopReason(r),
    stop_sequence: null,
    usage: usageOf(r, r.usage.output),
  };
}

const frame = (event: string, data: Record<string, unknown>, tokens = 0): Frame => ({
  event,
  data: { type: event, ...data },
  tokens,
});

/** The streamed message's events. */
export function messageFrames(r: Rendering): Frame[] {
  const frames: Frame[] = [
    frame("message_start", {
      message: {
        ...head(r),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageOf(r, 1),
      },
    }),
  ];
  r.parts.forEach((part, index) => {
    const block = part.kind === "text"
      ? { type: "text", text: "" }
      : { type: "tool_use", id: part.id, name: part.name, input: {} };
    frames.push(frame("content_block_start", { index, content_block: block }));
    if (index === 0) frames.push(frame("ping", {}));
    for (const piece of part.pieces) {
      const delta = part.kind === "text"
        ? { type: "text_delta", text: piece }
        : { type: "input_json_delta", partial_json: piece };
      frames.push(frame("content_block_delta", { index, delta }, 1));
    }
    frames.push(frame("content_block_stop", { index }));
  });
  frames.push(
    frame("message_delta", {
      delta: { stop_reason: stopReason(r), stop_sequence: null },
      usage: { output_tokens: r.usage.output },
    }),
    frame("message_stop", {}),
  );
  return frames;
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/** The Messages API's error body for `failure`. */
export function messagesError(failure: Failure): unknown {
  const type = ERROR_TYPES[failure.status] ?? "api_error";
  return {
    type: "error",
    error: {
      type,
      message: failure.message ?? (type === "overloaded_error" ? "Overloaded" : type),
    },
  };
}
