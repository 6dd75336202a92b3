/**
 * How the fake vendor reads a request: which API it is for (by method and path), its model,
 * whether it streams, its prompt as one text (what scripted matchers and the cache read), its
 * caller and cache key, and the record kept of it for assertions.
 */
import { anthropicBlocks, type CacheReading, geminiText, openaiText } from "./prompt_cache.ts";
import type { Failure } from "./reply.ts";

export type Api =
  | "messages"
  | "count_tokens"
  | "responses"
  | "chat"
  | "gemini"
  | "gemini_count"
  | "models";

/** Callers may name themselves with this header (an HTTP agent's `headers`). */
export const CALLER_HEADER = "x-fake-caller";

/** One request as the fake saw it. */
export interface RecordedRequest {
  /** 0-based arrival order. */
  index: number;
  api: Api | "unknown";
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /** The JSON body, or the raw text when it was not JSON (undefined when empty). */
  body: unknown;
  raw: string;
  model: string;
  stream: boolean;
  /** The prompt as one text, in the order the model reads it. */
  prompt: string;
  /** The caller header, else the API. */
  caller: string;
  /** The client's port: equal ports on two requests mean one reused connection. */
  clientPort: number;
  /** Cache reads and writes (zero for requests that are not model calls). */
  cache: CacheReading;
  /** The reply's status (0 until decided); clock times of arrival, first output token, last byte. */
  status: number;
  arrivedAt: number;
  firstTokenAt: number;
  repliedAt: number;
  /** The request's signal: aborts when the client goes away. */
  signal: AbortSignal;
}

type Json = Record<string, unknown>;

/** The API a method and path belong to, and the model a Gemini path names. */
export function routeOf(
  method: string,
  path: string,
): { api: Api; pathModel?: string } | undefined {
  if (method === "GET" && /\/v1\/models$/.test(path)) return { api: "models" };
  if (method !== "POST") return undefined;
  if (/\/v1\/messages\/count_tokens$/.test(path)) return { api: "count_tokens" };
  if (/\/v1\/messages$/.test(path)) return { api: "messages" };
  if (/\/responses$/.test(path)) return { api: "responses" };
  if (/\/chat\/completions$/.test(path)) return { api: "chat" };
  const gemini = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/i
    .exec(path);
  if (!gemini) return undefined;
  const api = gemini[2] === "countTokens" ? "gemini_count" : "gemini";
  return { api, pathModel: gemini[1] };
}

/** The body as JSON when it parses, else its text (undefined when empty). */
export function parseBody(raw: string): unknown {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** The prompt as one text for an API's body (empty for bodies that are not objects). */
export function promptOf(api: Api | "unknown", body: unknown): string {
  if (!body || typeof body !== "object") return "";
  const json = body as Json;
  if (api === "messages" || api === "count_tokens") {
    return anthropicBlocks(json).map((b) => b.text).join("");
  }
  if (api === "gemini" || api === "gemini_count") return geminiText(json);
  if (api === "responses" || api === "chat") return openaiText(json);
  return "";
}

/** Whether the caller asked for a stream. */
export function streams(api: Api | "unknown", path: string, body: unknown): boolean {
  if (api === "gemini") return path.endsWith(":streamGenerateContent");
  return (body as Json | undefined)?.stream === true;
}

/** The key the vendor's cache is partitioned by: the credential the request carries. */
export function cacheKeyOf(headers: Headers, query: URLSearchParams): string {
  return headers.get("x-api-key") ?? headers.get("authorization") ??
    headers.get("x-goog-api-key") ?? query.get("key") ?? "";
}

/** The model a request names (in the body, or in a Gemini path). */
export function modelOf(body: unknown, pathModel: string | undefined): string {
  if (pathModel) return pathModel;
  const model = (body as Json | undefined)?.model;
  return typeof model === "string" ? model : "";
}

/** The Messages API refuses more cache breakpoints than this. */
const MAX_BREAKPOINTS = 4;

/** Why a model call is refused as the real API would refuse it (400), or undefined. */
export function invalidOf(request: RecordedRequest): Failure | undefined {
  if (!request.body || typeof request.body !== "object") {
    return { status: 400, message: "the body is not a JSON object" };
  }
  if (request.api !== "messages") return undefined;
  const marks = anthropicBlocks(request.body as Json).filter((b) => b.breakpoint).length;
  if (marks <= MAX_BREAKPOINTS) return undefined;
  return {
    status: 400,
    message: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. ` +
      `Found ${marks}.`,
  };
}

/** Whether the request asks a model for an answer (not a count, a list or an unknown path). */
export function isModelCall(request: Pick<RecordedRequest, "api">): boolean {
  return ["messages", "responses", "chat", "gemini"].includes(request.api);
}

const NO_CACHE: CacheReading = { total: 0, read: 0, write: 0 };

/** The record of an HTTP request whose body was `raw`. */
export function recordOf(
  req: Request,
  raw: string,
  at: Pick<RecordedRequest, "index" | "clientPort" | "arrivedAt" | "signal">,
): RecordedRequest {
  const url = new URL(req.url);
  const route = routeOf(req.method, url.pathname);
  const api = route?.api ?? "unknown";
  const body = parseBody(raw);
  return {
    ...at,
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
    cache: NO_CACHE,
    status: 0,
    firstTokenAt: NaN,
    repliedAt: NaN,
  };
}
