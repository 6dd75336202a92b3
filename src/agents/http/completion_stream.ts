/**
 * One streaming completion over `fetch`: a POST with a time-out, cancellation and one bounded
 * retry on 429/5xx honouring `retry-after`, its reply framed as SSE and handed to the adapter's
 * parser as the bytes arrive. Proxies (HTTP(S)_PROXY, NO_PROXY), TLS, HTTP/2, connection reuse
 * and redirects are the runtime's.
 */
import { getLogger } from "@logtape/logtape";
import type { Clock } from "../../base/clock.ts";
import { oneLine } from "../../base/text.ts";
import type { ParsedLine } from "../types.ts";
import type { HttpAdapter, HttpRequest } from "./http_api.ts";
import {
  describeFetchError,
  errorBodyText,
  isRetryable,
  redact,
  retryAfterMs,
  upstreamMessage,
} from "./upstream_errors.ts";
import { MalformedStream, SseDecoder, type SseEvent } from "./sse_parser.ts";
import { userInfoAsHeader, withoutUserInfo } from "./url_credentials.ts";

const logger = getLogger(["council-gateway", "agents", "http"]);

/** When the retry-after wait is absent: a short pause, so a 5xx blip has time to clear. */
const DEFAULT_RETRY_WAIT_MS = 1000;

interface StreamCall {
  adapter: HttpAdapter;
  request: HttpRequest;
  /** The agent's name, for log lines. */
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
  /** Why the exchange failed (status and upstream message, or the request's failure). */
  error?: string;
  status?: number;
  timedOut: boolean;
  aborted: boolean;
  /** Whether the one retry was used. */
  retried: boolean;
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

/**
 * POSTs the request and streams the reply's events through the adapter's parser. Never throws:
 * every failure comes back in the exit. Cancellation and the time-out abort the fetch, which
 * closes the connection (the upstream sees the client go).
 */
export async function streamCompletion(call: StreamCall): Promise<StreamExit> {
  const exit: StreamExit = { completed: false, timedOut: false, aborted: false, retried: false };
  if (call.signal?.aborted) {
    exit.aborted = true;
    return exit;
  }
  const controller = new AbortController();
  const onAbort = () => {
    exit.aborted = true;
    controller.abort();
  };
  call.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = call.clock.setTimeout(() => {
    exit.timedOut = true;
    controller.abort();
  }, call.timeoutMs);
  try {
    call.onStart();
    await exchange(call, exit, controller.signal);
  } finally {
    call.clock.clearTimeout(timer);
    call.signal?.removeEventListener("abort", onAbort);
  }
  return exit;
}

/** The POST and its one retry; the reply's events, or the failure, end up in `exit`. */
async function exchange(call: StreamCall, exit: StreamExit, signal: AbortSignal): Promise<void> {
  const { url, headers } = userInfoAsHeader(call.request.url, call.request.headers);
  // Shown in logs and errors: user info in a base URL is a credential, never printed.
  const shown = withoutUserInfo(call.request.url);
  for (let attempt = 0;; attempt++) {
    let response: Response;
    try {
      logger.debug("{agent}: POST {url}", { agent: call.agentName, url: shown });
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
        body: call.request.body,
        signal,
        // A redirect is not followed: the runtime would carry `x-api-key` to another host.
        redirect: "manual",
      });
    } catch (err) {
      if (!signal.aborted) exit.error = `cannot reach ${shown}: ${describeFetchError(err)}`;
      return;
    }
    exit.status = response.status;
    if (response.ok) return await readReply(call, response, exit, signal);
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      exit.error = `HTTP ${response.status} from ${shown}: redirect to ` +
        `${withoutUserInfo(response.headers.get("location") ?? "?")} not followed ` +
        "(the API key would go along); set baseUrl to the final address";
      return;
    }
    const failure = await refusal(call, response, shown);
    if (signal.aborted) return;
    const wait = attempt === 0 ? retryWait(call, response, failure, exit) : undefined;
    if (wait === undefined) {
      exit.error ??= exit.retried ? `${failure} (after one retry)` : failure;
      return;
    }
    exit.retried = true;
    await call.sleep(wait, signal);
    if (signal.aborted) return;
  }
}

const isRedirect = (status: number) => status >= 300 && status < 400;

/** A non-2xx reply in one line: status, URL and the upstream's message (key masked). */
async function refusal(call: StreamCall, response: Response, shown: string): Promise<string> {
  const body = await errorBodyText(response);
  const message = upstreamMessage(call.adapter, response.status, response.statusText, body);
  return `HTTP ${response.status} from ${shown}: ${redact(message, call.secret)}`;
}

/**
 * The wait before the one retry of a failed first attempt, or undefined when it is not
 * retried (then a wait over the limit is the exit's error).
 */
function retryWait(
  call: StreamCall,
  response: Response,
  failure: string,
  exit: StreamExit,
): number | undefined {
  if (!isRetryable(response.status)) return undefined;
  const wait = retryAfterMs(response.headers, call.clock.now()) ?? DEFAULT_RETRY_WAIT_MS;
  if (wait > call.maxRetryWaitMs) {
    exit.error = `${failure} (retry-after ${Math.ceil(wait / 1000)} s is over the ` +
      `${Math.round(call.maxRetryWaitMs / 1000)} s limit: not retried)`;
    return undefined;
  }
  logger.info("{agent}: {failure}; retrying in {ms} ms", {
    agent: call.agentName,
    failure,
    ms: wait,
  });
  // Announced as a CLI announces its retries: the council then knows this upstream is failing
  // (with the quorum in it stops waiting, and a synthesizer whose child failed so is skipped).
  call.onItems([{ type: "retry", attempt: 1, maxAttempts: 2, reason: failure }]);
  return wait;
}

/** A 2xx reply: its SSE events, or why it is not an event stream. */
async function readReply(
  call: StreamCall,
  response: Response,
  exit: StreamExit,
  signal: AbortSignal,
): Promise<void> {
  const type = response.headers.get("content-type") ?? "";
  if (/event-stream/i.test(type)) return await readEvents(call, response, exit, signal);
  const body = await errorBodyText(response);
  if (signal.aborted) return;
  const found = call.adapter.errorMessage(body);
  exit.error = redact(
    `malformed stream: expected text/event-stream, got ` +
      `${type.split(";")[0] || "no content-type"}: ${
        found ? oneLine(found, 200) : oneLine(body, 120) || "(empty body)"
      }`,
    call.secret,
  );
}

/** Joins adjacent text items (one delta per batch instead of one per SSE event). */
function mergeText(items: ParsedLine[]): ParsedLine[] {
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
 * Frames the body's SSE events and hands on what each chunk held as one list, adjacent text
 * joined: a token is passed on as soon as its bytes arrive, and a burst that arrives together
 * costs the council one delta, not one per event.
 */
async function readEvents(
  call: StreamCall,
  response: Response,
  exit: StreamExit,
  signal: AbortSignal,
): Promise<void> {
  const decoder = new SseDecoder(call.maxEventBytes);
  const parse = call.adapter.createParser();
  const deliver = (events: SseEvent[]) => {
    if (events.length === 0) return;
    const items = events.length === 1 ? parse(events[0]) : mergeText(events.flatMap(parse));
    if (items.length) call.onItems(items);
  };
  const reader = response.body?.getReader();
  try {
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      deliver(decoder.push(chunk.value));
    }
    deliver(decoder.end());
    exit.completed = true;
  } catch (err) {
    await reader?.cancel().catch(() => {});
    if (!signal.aborted) {
      exit.error = err instanceof MalformedStream
        ? `malformed stream: ${err.message}`
        : `connection lost mid-stream: ${describeFetchError(err)}`;
    }
  }
}
