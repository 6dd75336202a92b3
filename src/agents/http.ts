/**
 * The HTTP runners' shared transport: one streaming POST per run with a time-out, cancellation
 * and one bounded retry on 429/5xx honouring `retry-after`; SSE framing; upstream failures
 * mapped to one clear line. What goes in the request and what an event means is the API
 * adapter's business (anthropic.ts, openai.ts).
 */
import { getLogger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { AgentConfig } from "../config.ts";
import type { ParsedLine } from "./types.ts";
import { oneLine } from "./activity.ts";
import type { Transport, Upstream } from "./transport.ts";

const logger = getLogger(["council-gateway", "agents", "http"]);

/** One server-sent event: its `event:` name ("message" when absent) and joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/** A request as an adapter builds it (the transport adds content-type and accept). */
export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What a run's request is built from. */
export interface RequestInput {
  model: string;
  /** The whole prompt: sent as a single user message. */
  prompt: string;
  /** Undefined when the key variable is unset (allowed only where the API needs no key). */
  apiKey?: string;
}

/** One model API: pure functions from config to request, and from events to parsed items. */
export interface HttpAdapter {
  /** Used when the agent sets no `baseUrl` (undefined: `baseUrl` is required). */
  defaultBaseUrl?: string;
  /** The gateway's variable holding the key when the agent sets no `apiKeyEnv`. */
  defaultApiKeyEnv: string;
  /** The API refuses every call without a key, so a missing key fails before the call. */
  keyRequired: boolean;
  /** The name of the event that ends a complete stream, for error messages. */
  endMarker: string;
  request(agent: AgentConfig, input: RequestInput): HttpRequest;
  /** Reads one SSE event; stateful (usage arrives in parts), so a factory. */
  createParser(): (event: SseEvent) => ParsedLine[];
  /** The message in an error body (JSON envelope or text), if one can be found. */
  errorMessage(body: string): string | undefined;
  /** GET request listing the models (doctor). */
  modelsRequest(
    agent: AgentConfig,
    apiKey?: string,
  ): { url: string; headers: Record<string, string> };
  /** Model ids in a models-list response body. */
  modelIds(body: unknown): string[];
}

/** The value when it is a JSON object (not null, not an array). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

/** The ids of a `{data: [{id}, …]}` models list, the shape both APIs use. */
export function listedModelIds(body: unknown): string[] {
  const data = asRecord(body)?.data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((entry) => {
    const id = asRecord(entry)?.id;
    return typeof id === "string" ? [id] : [];
  });
}

/** A reader of a JSON body's text: undefined when the text is not JSON. */
export function readJson<T>(
  read: (value: unknown) => T | undefined,
): (text: string) => T | undefined {
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    return read(value);
  };
}

/** The agent's API root without a trailing slash. */
export function baseUrlOf(agent: AgentConfig, adapter: HttpAdapter): string {
  return (agent.baseUrl ?? adapter.defaultBaseUrl ?? "").replace(/\/+$/, "");
}

/** The variable the agent's key is read from. */
export function apiKeyEnvOf(agent: AgentConfig, adapter: HttpAdapter): string {
  return agent.apiKeyEnv ?? adapter.defaultApiKeyEnv;
}

/** A stream that is not SSE as the API speaks it (e.g. an event larger than the limit). */
export class MalformedStream extends Error {
  override name = "MalformedStream";
}

/**
 * Incremental SSE framing (WHATWG rules: `event:`/`data:` fields, `:` comments, a blank line
 * ends an event, CR/LF/CRLF line ends). An unfinished line may not grow beyond `maxBytes`.
 */
export class SseDecoder {
  #decoder = new TextDecoder();
  #buffer = "";
  #event = "";
  #data: string[] = [];
  #dataChars = 0;
  /** A CR ended the last chunk: a LF starting the next one belongs to it. */
  #pendingCr = false;

  constructor(readonly maxBytes = 8 * 1024 * 1024) {}

  push(bytes: Uint8Array): SseEvent[] {
    return this.#feed(this.#decoder.decode(bytes, { stream: true }));
  }

  /** Events completed by the end of the stream (a last event without its blank line counts). */
  end(): SseEvent[] {
    const events = this.#feed(this.#decoder.decode());
    if (this.#buffer) this.#line(this.#buffer, events);
    this.#buffer = "";
    this.#dispatch(events);
    return events;
  }

  #feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.#pendingCr = false;
    const buffer = this.#buffer + text;
    // CR line ends are rare: without one a single indexOf per line will do.
    const hasCr = buffer.includes("\r");
    let start = 0;
    for (;;) {
      const end = hasCr ? nextLineEnd(buffer, start) : buffer.indexOf("\n", start);
      if (end === -1) break;
      this.#line(buffer.slice(start, end), events);
      start = end + 1;
      if (buffer[end] === "\r") {
        if (start === buffer.length) this.#pendingCr = true;
        else if (buffer[start] === "\n") start++;
      }
    }
    const rest = buffer.slice(start);
    if (rest.length > this.maxBytes) {
      throw new MalformedStream(`an SSE line exceeds ${this.maxBytes} bytes`);
    }
    this.#buffer = rest;
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") return this.#dispatch(events);
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") {
      this.#dataChars += value.length;
      if (this.#dataChars > this.maxBytes) {
        throw new MalformedStream(`an SSE event exceeds ${this.maxBytes} bytes`);
      }
      this.#data.push(value);
    }
  }

  #dispatch(events: SseEvent[]): void {
    if (this.#data.length > 0) {
      events.push({ event: this.#event || "message", data: this.#data.join("\n") });
    }
    this.#event = "";
    this.#data = [];
    this.#dataChars = 0;
  }
}

function nextLineEnd(text: string, from: number): number {
  const lf = text.indexOf("\n", from);
  const cr = text.indexOf("\r", from);
  if (cr === -1) return lf;
  if (lf === -1) return cr;
  return Math.min(cr, lf);
}

/**
 * How long the upstream asks us to wait, in ms: `retry-after-ms` (OpenAI), else `retry-after`
 * as seconds or an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `text` with every occurrence of `secret` masked (an upstream may echo the key it got). */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.replaceAll(secret, "***") : text;
}

/** Whether a status is worth the one retry: rate limited, or the upstream failed. */
export function isRetryable(status: number): boolean {
  return status === 429 || status >= 500;
}

/** A failed request (no HTTP response) in a few words: connection refused, host not found, … */
export function describeFetchError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
  const code = (err as { code?: unknown })?.code;
  const text = `${message} ${cause} ${typeof code === "string" ? code : ""}`;
  if (err instanceof Deno.errors.NotCapable || /Requires net access/i.test(text)) {
    return "not allowed to connect (the gateway needs --allow-net)";
  }
  if (/connection refused|ECONNREFUSED|os error 111/i.test(text)) return "connection refused";
  if (/dns error|failed to lookup|name or service not known|ENOTFOUND|EAI_AGAIN/i.test(text)) {
    return "host not found";
  }
  if (/certificate|tls|ssl/i.test(text)) return `TLS error: ${oneLine(message, 200)}`;
  if (/connection reset|ECONNRESET|broken pipe/i.test(text)) return "connection reset";
  return oneLine(message, 200);
}

/** The upstream's error in one line: the adapter's reading of the body, else the body's start. */
export function upstreamMessage(
  adapter: HttpAdapter,
  status: number,
  statusText: string,
  body: string,
): string {
  const found = adapter.errorMessage(body);
  if (found) return oneLine(found, 300);
  const text = oneLine(body, 200);
  return text || statusText || `status ${status}`;
}

/** Waits `ms` on the clock; resolves early when `signal` aborts. */
export function clockSleep(clock: Clock): (ms: number, signal: AbortSignal) => Promise<void> {
  return (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clock.clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = clock.setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
}

export interface StreamCall {
  adapter: HttpAdapter;
  request: HttpRequest;
  /** How the request travels (see transport.ts). */
  transport: Transport;
  /** The agent's name: its connection pool, and log lines. */
  agentName: string;
  signal?: AbortSignal;
  timeoutMs: number;
  clock: Clock;
  /** The wait before the retry (tests inject one that returns at once). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A `retry-after` longer than this is not waited for: the run fails instead. */
  maxRetryWaitMs: number;
  /** The API key: an upstream that echoes it in a message gets it masked. */
  secret?: string;
  /** The most one SSE line or event may hold. */
  maxEventBytes: number;
  /** The request is about to be sent (the first time). */
  onStart(): void;
  /** Each event, parsed by the adapter. */
  onItems(items: ParsedLine[]): void;
}

/** How the HTTP exchange ended; the stream's content is judged by the caller. */
export interface StreamExit {
  /** A 2xx response was read to its end. */
  completed: boolean;
  /** Why the exchange failed (status and upstream message, or the transport's reason). */
  error?: string;
  status?: number;
  timedOut: boolean;
  aborted: boolean;
  /** Whether the one retry was used. */
  retried: boolean;
}

/** When the retry-after wait is absent: a short pause, so a 5xx blip has time to clear. */
export const DEFAULT_RETRY_WAIT_MS = 1000;

/**
 * POSTs the request and streams the reply's events through the adapter's parser. Never throws:
 * every failure comes back in the exit. Cancellation and the time-out abort the request, which
 * closes the connection (the upstream sees the client go).
 */
export async function streamCompletion(call: StreamCall): Promise<StreamExit> {
  const exit: StreamExit = { completed: false, timedOut: false, aborted: false, retried: false };
  const controller = new AbortController();
  const onAbort = () => {
    exit.aborted = true;
    controller.abort();
  };
  if (call.signal?.aborted) {
    exit.aborted = true;
    return exit;
  }
  call.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = call.clock.setTimeout(() => {
    exit.timedOut = true;
    controller.abort();
  }, call.timeoutMs);
  const stopped = () => controller.signal.aborted;
  const target = call.request.url;
  // Shown in logs and errors: user info in a base URL is a credential, never printed.
  const url = withoutUserInfo(target);
  try {
    call.onStart();
    for (let attempt = 0;; attempt++) {
      let response: Upstream;
      try {
        logger.debug("{agent}: POST {url}", { agent: call.agentName, url });
        response = await call.transport(target, {
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            ...call.request.headers,
          },
          body: call.request.body,
          signal: controller.signal,
          poolKey: call.agentName,
        });
      } catch (err) {
        if (!stopped()) exit.error = `cannot reach ${url}: ${describeFetchError(err)}`;
        return exit;
      }
      exit.status = response.status;
      if (response.status < 200 || response.status > 299) {
        const body = await response.text();
        if (stopped()) return exit;
        const message = redact(
          upstreamMessage(call.adapter, response.status, response.statusText, body),
          call.secret,
        );
        const failure = `HTTP ${response.status} from ${url}: ${message}`;
        if (attempt === 0 && isRetryable(response.status)) {
          const wait = retryAfterMs(response.headers, call.clock.now()) ?? DEFAULT_RETRY_WAIT_MS;
          if (wait <= call.maxRetryWaitMs) {
            logger.info("{agent}: {failure}; retrying in {ms} ms", {
              agent: call.agentName,
              failure,
              ms: wait,
            });
            exit.retried = true;
            await call.sleep(wait, controller.signal);
            if (stopped()) return exit;
            continue;
          }
          exit.error = `${failure} (retry-after ${Math.ceil(wait / 1000)} s is over the ` +
            `${Math.round(call.maxRetryWaitMs / 1000)} s limit: not retried)`;
          return exit;
        }
        exit.error = exit.retried ? `${failure} (after one retry)` : failure;
        return exit;
      }
      const type = response.headers.get("content-type") ?? "";
      if (!/event-stream/i.test(type)) {
        const body = await response.text();
        if (stopped()) return exit;
        const found = call.adapter.errorMessage(body);
        exit.error = redact(
          `malformed stream: expected text/event-stream, got ` +
            `${type.split(";")[0] || "no content-type"}: ${
              found ? oneLine(found, 200) : oneLine(body, 120) || "(empty body)"
            }`,
          call.secret,
        );
        return exit;
      }
      return await readEvents(call, response, exit, stopped);
    }
  } finally {
    call.clock.clearTimeout(timer);
    call.signal?.removeEventListener("abort", onAbort);
  }
}

/** The URL with any `user:password@` removed. */
export function withoutUserInfo(href: string): string {
  const url = new URL(href);
  if (!url.username && !url.password) return href;
  url.username = "";
  url.password = "";
  return url.href;
}

/** Joins adjacent text items (one delta per batch instead of one per SSE event). */
export function mergeText(items: ParsedLine[]): ParsedLine[] {
  const merged: ParsedLine[] = [];
  for (const item of items) {
    const last = merged.at(-1);
    if (item.type === "text" && last?.type === "text") {
      merged[merged.length - 1] = { type: "text", text: last.text + item.text };
    } else merged.push(item);
  }
  return merged;
}

/**
 * Frames the body's SSE events and hands on what each batch of bytes held (bytes that arrived
 * together) as one list, adjacent text joined: a burst of tokens costs the council one delta,
 * not hundreds, and no token waits for anything that has not arrived yet.
 */
async function readEvents(
  call: StreamCall,
  response: Upstream,
  exit: StreamExit,
  stopped: () => boolean,
): Promise<StreamExit> {
  const decoder = new SseDecoder(call.maxEventBytes);
  const parse = call.adapter.createParser();
  const deliver = (events: SseEvent[]) => {
    if (events.length === 0) return;
    const items = events.length === 1 ? parse(events[0]) : mergeText(events.flatMap(parse));
    if (items.length) call.onItems(items);
  };
  try {
    await response.pipe((bytes) => deliver(decoder.push(bytes)));
    deliver(decoder.end());
    exit.completed = true;
  } catch (err) {
    if (!stopped()) {
      exit.error = err instanceof MalformedStream
        ? `malformed stream: ${err.message}`
        : `connection lost mid-stream: ${describeFetchError(err)}`;
    }
  }
  return exit;
}

/** What `doctor` learns from an endpoint. */
export interface EndpointProbe {
  /** An HTTP answer came (any status). */
  reachable: boolean;
  status?: number;
  /** Listed model ids (undefined when the list could not be had). */
  models?: string[];
  /** Why not reachable, or the upstream's message for a non-2xx status. */
  error?: string;
}

/** GETs the adapter's models list with a short time limit. Never throws. */
export async function probeModels(
  adapter: HttpAdapter,
  agent: AgentConfig,
  apiKey: string | undefined,
  timeoutMs: number,
): Promise<EndpointProbe> {
  const { url, headers } = adapter.modelsRequest(agent, apiKey);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { headers, signal: controller.signal });
    const body = await response.text();
    if (!response.ok) {
      return {
        reachable: true,
        status: response.status,
        error: upstreamMessage(adapter, response.status, response.statusText, body),
      };
    }
    let models: string[] | undefined;
    try {
      models = adapter.modelIds(JSON.parse(body));
    } catch {
      models = undefined;
    }
    return { reachable: true, status: response.status, models };
  } catch (err) {
    return {
      reachable: false,
      error: controller.signal.aborted
        ? `no answer within ${timeoutMs} ms`
        : describeFetchError(err),
    };
  } finally {
    clearTimeout(timer);
  }
}
