/**
 * The one fake vendor API for tests and benches: a Deno.serve server on 127.0.0.1:0 speaking
 * Anthropic Messages, OpenAI Responses and Chat Completions, and Gemini, streamed and not, that
 * answers as its script says (text, JSON, tool calls, failures, hangs), paces answers by a latency
 * profile per caller or model, reports prompt-cache reads and writes, and records every request.
 */
import { failureResponse, modelResponse } from "./answer.ts";
import {
  fillerAnswer,
  INSTANT,
  type LatencyProfile,
  type PaceClock,
  realClock,
} from "./latency.ts";
import { seededRandom } from "./latency.ts";
import {
  anthropicBlocks,
  AutomaticCache,
  type CacheReading,
  ExplicitCache,
} from "./prompt_cache.ts";
import { tokensOf } from "./prompt_cache.ts";
import {
  cacheKeyOf,
  CALLER_HEADER,
  invalidOf,
  modelOf,
  parseBody,
  promptOf,
  type RecordedRequest,
  routeOf,
  streams,
} from "./request.ts";
import { type Answer, type Matcher, partsOf, type Rule, Script } from "./script.ts";

export type { Answer, Matcher, Rule } from "./script.ts";
export type { Failure, Part } from "./reply.ts";
export type { Api, RecordedRequest } from "./request.ts";
export { CALLER_HEADER, routeOf } from "./request.ts";
export type { LatencyProfile, PaceClock } from "./latency.ts";
export { INSTANT, realClock, VirtualClock } from "./latency.ts";

export interface FakeVendorOptions {
  /** The clock replies are paced on (default: real time). */
  clock?: PaceClock;
  /** Seeds the latency jitter (default 1). */
  seed?: number;
  /** The latency profile for requests no other profile covers (default: instant). */
  profile?: LatencyProfile;
  /** Latency profiles by caller (the caller header) or, failing that, by model. */
  profiles?: Record<string, LatencyProfile>;
  /**
   * The answer when no rule matches; undefined (or a function returning it) gives a filler text
   * of the latency profile's answer length.
   */
  answer?: Answer | ((request: RecordedRequest) => Answer | undefined);
  rules?: Rule[];
}

export interface FakeVendor extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  /** Adds a rule (after those already there); `times` limits how many requests it answers. */
  on(match: Matcher, answer: Rule["answer"], times?: number): FakeVendor;
  /** Removes every rule. */
  reset(): void;
  /** Resolves when a client went away before its reply ended. */
  clientGone: Promise<void>;
  close(): Promise<void>;
}

const NO_CACHE: CacheReading = { total: 0, read: 0, write: 0 };

function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Starts a fake vendor; dispose it (or `close`) to stop it. */
export function startFakeVendor(options: FakeVendorOptions = {}): FakeVendor {
  const clock = options.clock ?? realClock;
  const script = new Script();
  for (const rule of options.rules ?? []) script.add(rule);
  const requests: RecordedRequest[] = [];
  const explicit = new ExplicitCache();
  const automatic = new AutomaticCache();
  const drawsPerKey = new Map<string, number>();
  const closing = new AbortController();
  const gone = Promise.withResolvers<void>();

  const profileOf = (request: RecordedRequest, answer: Answer | undefined) =>
    answer?.profile ?? options.profiles?.[request.caller] ?? options.profiles?.[request.model] ??
      options.profile ?? INSTANT;

  const randomFor = (request: RecordedRequest) => {
    const key = `${request.caller}\u0000${request.model}`;
    const n = drawsPerKey.get(key) ?? 0;
    drawsPerKey.set(key, n + 1);
    return seededRandom(hashOf(`${options.seed ?? 1}\u0000${key}\u0000${n}`));
  };

  const cacheOf = (request: RecordedRequest, key: string): CacheReading => {
    const scope = `${key}\u0000${request.model}`;
    if (request.api === "messages") {
      return explicit.use(scope, anthropicBlocks(request.body as Record<string, unknown>));
    }
    return automatic.use(scope, request.prompt);
  };

  const record = async (req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
    const url = new URL(req.url);
    const route = routeOf(req.method, url.pathname);
    const api = route?.api ?? "unknown";
    const raw = await req.text();
    const body = parseBody(raw);
    const request: RecordedRequest = {
      index: requests.length,
      api,
      method: req.method,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      raw,
      model: modelOf(body, route?.pathModel),
      stream: streams(api, url.pathname, body),
      prompt: promptOf(api, body),
      caller: req.headers.get(CALLER_HEADER) ?? api,
      clientPort: info.remoteAddr.port,
      cache: NO_CACHE,
      status: 0,
      arrivedAt: clock.now(),
      firstTokenAt: NaN,
      repliedAt: NaN,
      signal: AbortSignal.any([req.signal, closing.signal]),
    };
    requests.push(request);
    return request;
  };

  const housekeeping = (request: RecordedRequest): Response => {
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
  };

  const isModelCall = (r: RecordedRequest) =>
    r.api === "messages" || r.api === "responses" || r.api === "chat" || r.api === "gemini";

  const reply = async (request: RecordedRequest): Promise<Response> => {
    const answer = script.answer(request) ??
      (isModelCall(request) ? defaultAnswer(request) : undefined);
    if (answer?.response) {
      // The test's own response: sent as it is, whatever the request.
      await clock.sleep(answer.delayMs ?? 0, request.signal);
      return await answer.response(request);
    }
    const invalid = isModelCall(request) ? invalidOf(request) : undefined;
    if (invalid) return failureResponse(request, invalid);
    if (!answer) return housekeeping(request);
    const profile = profileOf(request, answer);
    if (answer.hang) {
      await new Promise<void>((resolve) =>
        request.signal.addEventListener("abort", () => resolve(), { once: true })
      );
      return new Response(null, { status: 504 });
    }
    const parts = partsOf(answer);
    if (answer.fail || !parts || !isModelCall(request)) {
      await clock.sleep(answer.delayMs ?? 0, request.signal);
      if (answer.fail) return failureResponse(request, answer.fail);
      return housekeeping(request);
    }
    const key = cacheKeyOf(request.headers, request.query);
    request.cache = cacheOf(request, key);
    return await modelResponse(request, parts, {
      clock,
      profile,
      random: randomFor(request),
      delayMs: answer.delayMs ?? 0,
      holdLast: answer.holdLast,
    });
  };

  const defaultAnswer = (request: RecordedRequest): Answer => {
    const given = typeof options.answer === "function" ? options.answer(request) : options.answer;
    return given ?? { text: fillerAnswer(profileOf(request, undefined).answerTokens) };
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req, info) => {
      const request = await record(req, info);
      req.signal.addEventListener("abort", () => gone.resolve(), { once: true });
      const response = await reply(request);
      if (!request.status) request.status = response.status;
      if (response.status !== 200 || !request.stream) request.repliedAt = clock.now();
      return response;
    },
  );
  const vendor: FakeVendor = {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    on(match, answer, times) {
      script.add({ match, answer, times });
      return vendor;
    },
    reset: () => script.clear(),
    clientGone: gone.promise,
    async close() {
      closing.abort();
      await server.shutdown();
    },
    [Symbol.asyncDispose]: () => vendor.close(),
  };
  return vendor;
}
