/**
 * The fake vendor's OpenAI wire formats: Responses (the JSON response, and the SSE sequence Codex
 * reads: response.created, in_progress, output_item.added, deltas, output_item.done,
 * response.completed) and Chat Completions (JSON, and chunks ending in a usage chunk and
 * [DONE]), with cached input tokens in the usage, and the API's error body for a failure.
 */
import type { Failure, Frame, RenderedPart, Rendering } from "./reply.ts";

function responsesUsage(r: Rendering) {
  return {
    input_tokens: r.usage.input,
    input_tokens_details: { cached_tokens: r.usage.cacheRead },
    output_tokens: r.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: r.usage.input + r.usage.output,
  };
}

function outputItem(r: Rendering, part: RenderedPart, index: number, done: boolean) {
  const status = done ? "completed" : "in_progress";
  if (part.kind === "tool") {
    return {
      id: `fc_${r.id}_${index}`,
      type: "function_call",
      status,
      call_id: part.id,
      name: part.name,
      arguments: done ? JSON.stringify(part.input) : "",
    };
  }
  return {
    id: `msg_${r.id}_${index}`,
    type: "message",
    role: "assistant",
    status,
    content: done ? [{ type: "output_text", text: part.text, annotations: [] }] : [],
  };
}

function response(r: Rendering, done: boolean) {
  return {
    id: `resp_${r.id}`,
    object: "response",
    created_at: 1_800_000_000,
    model: r.model,
    status: done ? "completed" : "in_progress",
    output: done ? r.parts.map((p, i) => outputItem(r, p, i, true)) : [],
    ...(done ? { usage: responsesUsage(r) } : {}),
  };
}

/** The non-streamed Responses reply. */
export function responsesJson(r: Rendering): unknown {
  return response(r, true);
}

function partFrames(r: Rendering, part: RenderedPart, index: number): Omit<Frame, "event">[] {
  const ids = { item_id: outputItem(r, part, index, false).id, output_index: index };
  const item = (done: boolean) => ({ item: outputItem(r, part, index, done), output_index: index });
  const out: { data: Record<string, unknown>; tokens: number }[] = [
    { data: { type: "response.output_item.added", ...item(false) }, tokens: 0 },
  ];
  if (part.kind === "tool") {
    for (const delta of part.pieces) {
      out.push({
        data: { type: "response.function_call_arguments.delta", ...ids, delta },
        tokens: 1,
      });
    }
    const args = JSON.stringify(part.input);
    out.push({
      data: { type: "response.function_call_arguments.done", ...ids, arguments: args },
      tokens: 0,
    });
  } else {
    const at = { ...ids, content_index: 0 };
    const textPart = (text: string) => ({ type: "output_text", text, annotations: [] });
    out.push({
      data: { type: "response.content_part.added", ...at, part: textPart("") },
      tokens: 0,
    });
    for (const delta of part.pieces) {
      out.push({ data: { type: "response.output_text.delta", ...at, delta }, tokens: 1 });
    }
    out.push(
      { data: { type: "response.output_text.done", ...at, text: part.text }, tokens: 0 },
      { data: { type: "response.content_part.done", ...at, part: textPart(part.text) }, tokens: 0 },
    );
  }
  out.push({ data: { type: "response.output_item.done", ...item(true) }, tokens: 0 });
  return out;
}

/** The streamed Responses events, numbered in sequence. */
export function responsesFrames(r: Rendering): Frame[] {
  const frames: Omit<Frame, "event">[] = [
    { data: { type: "response.created", response: response(r, false) }, tokens: 0 },
    { data: { type: "response.in_progress", response: response(r, false) }, tokens: 0 },
    ...r.parts.flatMap((part, i) => partFrames(r, part, i)),
    { data: { type: "response.completed", response: response(r, true) }, tokens: 0 },
  ];
  return frames.map((f, sequence_number) => {
    const data: Record<string, unknown> = {
      ...(f.data as Record<string, unknown>),
      sequence_number,
    };
    return { event: String(data.type), data, tokens: f.tokens };
  });
}

function chatUsage(r: Rendering) {
  return {
    prompt_tokens: r.usage.input,
    completion_tokens: r.usage.output,
    total_tokens: r.usage.input + r.usage.output,
    prompt_tokens_details: { cached_tokens: r.usage.cacheRead },
  };
}

const finishReason = (r: Rendering) =>
  r.parts.some((p) => p.kind === "tool") ? "tool_calls" : "stop";

function toolCalls(r: Rendering) {
  return r.parts.flatMap((p) =>
    p.kind === "tool"
      ? [{
        id: p.id,
        type: "function",
        function: { name: p.name, arguments: JSON.stringify(p.input) },
      }]
      : []
  );
}

/** The non-streamed chat completion. */
export function chatJson(r: Rendering): unknown {
  const text = r.parts.flatMap((p) => (p.kind === "text" ? [p.text] : [])).join("");
  const calls = toolCalls(r);
  return {
    id: `chatcmpl-${r.id}`,
    object: "chat.completion",
    created: 1_800_000_000,
    model: r.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: text || null,
        ...(calls.length ? { tool_calls: calls } : {}),
      },
      finish_reason: finishReason(r),
    }],
    usage: chatUsage(r),
  };
}

/** The streamed chat completion's chunks; the usage chunk only when the request asked for it. */
export function chatFrames(r: Rendering, includeUsage: boolean): Frame[] {
  const chunk = (choices: unknown[], tokens = 0, extra: Record<string, unknown> = {}): Frame => ({
    data: {
      id: `chatcmpl-${r.id}`,
      object: "chat.completion.chunk",
      created: 1_800_000_000,
      model: r.model,
      choices,
      ...extra,
    },
    tokens,
  });
  const delta = (d: Record<string, unknown>, tokens: number) =>
    chunk([{ index: 0, delta: d, finish_reason: null }], tokens);
  const frames: Frame[] = [delta({ role: "assistant", content: "" }, 0)];
  let call = 0;
  for (const part of r.parts) {
    if (part.kind === "text") {
      for (const piece of part.pieces) frames.push(delta({ content: piece }, 1));
      continue;
    }
    const index = call++;
    frames.push(delta({
      tool_calls: [{
        index,
        id: part.id,
        type: "function",
        function: { name: part.name, arguments: "" },
      }],
    }, 0));
    for (const piece of part.pieces) {
      frames.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }, 1));
    }
  }
  frames.push(chunk([{ index: 0, delta: {}, finish_reason: finishReason(r) }]));
  if (includeUsage) frames.push(chunk([], 0, { usage: chatUsage(r) }));
  frames.push({ data: "[DONE]", tokens: 0 });
  return frames;
}

const ERROR_TYPES: Record<number, [string, string | null]> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
};

/** The OpenAI APIs' error body for `failure`. */
export function openaiError(failure: Failure): unknown {
  const [type, code] = ERROR_TYPES[failure.status] ?? ["server_error", null];
  return {
    error: { message: failure.message ?? `${type} (${failure.status})`, type, param: null, code },
  };
}
