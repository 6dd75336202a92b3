/**
 * Turns one model call and its scripted answer into the vendor's HTTP reply: the failure with its
 * error body and `retry-after`, or the rendered reply — JSON after the whole answer's time, or
 * SSE frames paced by the latency schedule.
 */
import { messageFrames, messageJson, messagesError } from "./anthropic.ts";
import { geminiError, generateFrames, generateJson } from "./gemini.ts";
import { type LatencyProfile, type PaceClock, schedule } from "./latency.ts";
import { chatFrames, chatJson, openaiError, responsesFrames, responsesJson } from "./openai.ts";
import { dueTimes, pacedStream, sleepUntil, tokenCount } from "./pace.ts";
import type { Failure, Frame, Part, Rendering } from "./reply.ts";
import { rendering } from "./reply.ts";
import type { RecordedRequest } from "./request.ts";
import { tokensOf } from "./prompt_cache.ts";

/** The reply to a request that is not a model call: token counts, the model list, or 404. */
export function housekeepingResponse(request: RecordedRequest): Response {
  switch (request.api) {
    case "count_tokens":
      return Response.json({ input_tokens: tokensOf(request.prompt.length) });
    case "gemini_count":
      return Response.json({ totalTokens: tokensOf(request.prompt.length) });
    case "models":
      return Response.json({
        object: "list",
        data: [{ type: "model", id: "fake-model", display_name: "Fake", created_at: "" }],
        has_more: false,
      });
    default:
      // A CLI's bodiless preconnect (HEAD /) is answered as a web server would.
      if (request.method === "HEAD") return new Response(null);
      return new Response("not found", { status: 404 });
  }
}

/** The vendor's error reply for `failure` on `request`'s API. */
export function failureResponse(request: RecordedRequest, failure: Failure): Response {
  const body = request.api === "messages" || request.api === "count_tokens"
    ? messagesError(failure)
    : request.api === "gemini" || request.api === "gemini_count"
    ? geminiError(failure)
    : openaiError(failure);
  const headers: Record<string, string> = {};
  if (failure.retryAfterS !== undefined) headers["retry-after"] = String(failure.retryAfterS);
  return Response.json(body, { status: failure.status, headers });
}

function framesOf(request: RecordedRequest, r: Rendering): Frame[] {
  switch (request.api) {
    case "messages":
      return messageFrames(r);
    case "responses":
      return responsesFrames(r);
    case "chat": {
      const options = (request.body as { stream_options?: { include_usage?: boolean } })
        .stream_options;
      return chatFrames(r, options?.include_usage === true);
    }
    default:
      return generateFrames(r);
  }
}

function jsonOf(request: RecordedRequest, r: Rendering): unknown {
  switch (request.api) {
    case "messages":
      return messageJson(r);
    case "responses":
      return responsesJson(r);
    case "chat":
      return chatJson(r);
    default:
      return generateJson(r);
  }
}

export interface Pacing {
  clock: PaceClock;
  profile: LatencyProfile;
  random: () => number;
  delayMs: number;
  /** The last output token waits for this. */
  holdLast?: Promise<unknown>;
}

/** The reply to a model call answered with `parts`, paced by `pacing`. */
export async function modelResponse(
  request: RecordedRequest,
  parts: readonly Part[],
  pacing: Pacing,
): Promise<Response> {
  const { cache } = request;
  const r = rendering(parts, request.model, `fake${request.index}`, {
    input: cache.total,
    cacheRead: cache.read,
    cacheWrite: cache.write,
  });
  const frames = framesOf(request, r);
  const plan = schedule(pacing.profile, tokenCount(frames), pacing.random);
  const started = request.arrivedAt;
  const { clock } = pacing;
  const replied = () => {
    request.repliedAt = clock.now();
    if (Number.isNaN(request.firstTokenAt)) request.firstTokenAt = request.repliedAt;
  };
  request.status = 200;
  if (!request.stream) {
    await sleepUntil(clock, started, pacing.delayMs + plan.tokenAtMs.at(-1)!, request.signal);
    await pacing.holdLast;
    replied();
    return Response.json(jsonOf(request, r));
  }
  if (request.api === "gemini" && request.query.get("alt") !== "sse") {
    // Without alt=sse Gemini streams one JSON array; sent whole, after the answer's time.
    await sleepUntil(clock, started, pacing.delayMs + plan.tokenAtMs.at(-1)!, request.signal);
    replied();
    return Response.json(frames.map((f) => f.data));
  }
  const due = dueTimes(frames, plan, pacing.delayMs);
  const body = pacedStream(frames, due, clock, started, {
    firstToken: () => (request.firstTokenAt = clock.now()),
    end: replied,
    holdLast: pacing.holdLast,
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
