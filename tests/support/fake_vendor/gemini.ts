/**
 * The fake vendor's Gemini wire format: generateContent's JSON, streamGenerateContent's chunks
 * (SSE with `alt=sse`, else one JSON array), usage with cached tokens, and the API's error body.
 */
import type { Failure, Frame, Rendering } from "./reply.ts";

function usageOf(r: Rendering) {
  return {
    promptTokenCount: r.usage.input,
    candidatesTokenCount: r.usage.output,
    totalTokenCount: r.usage.input + r.usage.output,
    cachedContentTokenCount: r.usage.cacheRead,
  };
}

function chunk(r: Rendering, parts: unknown[], last: boolean) {
  return {
    candidates: [{
      content: { parts, role: "model" },
      index: 0,
      ...(last ? { finishReason: "STOP" } : {}),
    }],
    modelVersion: r.model,
    responseId: r.id,
    ...(last ? { usageMetadata: usageOf(r) } : {}),
  };
}

/** The non-streamed generateContent reply. */
export function generateJson(r: Rendering): unknown {
  return chunk(
    r,
    r.parts.map((p) =>
      p.kind === "text" ? { text: p.text } : { functionCall: { name: p.name, args: p.input } }
    ),
    true,
  );
}

/** The streamed chunks: a text piece each; a function call whole; usage on the last. */
export function generateFrames(r: Rendering): Frame[] {
  const frames: Frame[] = [];
  for (const part of r.parts) {
    if (part.kind === "text") {
      for (const text of part.pieces) frames.push({ data: chunk(r, [{ text }], false), tokens: 1 });
    } else {
      const call = { functionCall: { name: part.name, args: part.input } };
      frames.push({ data: chunk(r, [call], false), tokens: part.pieces.length });
    }
  }
  frames.push({ data: chunk(r, [{ text: "" }], true), tokens: 0 });
  return frames;
}

const STATUSES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** The Gemini API's error body for `failure`. */
export function geminiError(failure: Failure): unknown {
  const status = STATUSES[failure.status] ?? "UNKNOWN";
  return {
    error: { code: failure.status, message: failure.message ?? status.toLowerCase(), status },
  };
}
