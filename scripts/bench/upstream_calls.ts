/**
 * The session benches' upstream: the fake vendor API (tests/support/fake_vendor) answering with a
 * scripted reply and reporting cache reads and writes as the real APIs would, seen as calls — per
 * model call its API, caller, size, prompt, cache reading, and how much of it repeats the same
 * caller's previous call.
 */
import {
  CALLER_HEADER,
  type RecordedRequest,
  startFakeVendor,
} from "../../tests/support/fake_vendor/mod.ts";
import type { CacheReading } from "../../tests/support/fake_vendor/prompt_cache.ts";

export { CALLER_HEADER };

export type UpstreamApi = "anthropic" | "openai" | "responses" | "gemini";

export interface UpstreamCall {
  api: UpstreamApi;
  model: string;
  caller: string;
  /** The request body's size in bytes. */
  bytes: number;
  /** The prompt's characters as the cache reads them. */
  promptChars: number;
  cache: CacheReading;
  /** Characters at the start of the prompt identical to the same caller's previous call. */
  repeatedChars: number;
  /** The prompt text as the cache read it (for comparisons). */
  text: string;
}

export interface CacheUpstream extends AsyncDisposable {
  origin: string;
  /** The model calls answered so far, in arrival order. */
  readonly calls: UpstreamCall[];
}

/** What to answer: the reply text for a call, given its prompt text and caller. */
export type ReplyScript = (call: Pick<UpstreamCall, "text" | "caller">) => string;

const APIS: Readonly<Record<string, UpstreamApi>> = {
  messages: "anthropic",
  chat: "openai",
  responses: "responses",
  gemini: "gemini",
};

/** How many characters `a` and `b` share from their start. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Calls from answered model requests, each compared with its caller's previous call. */
export class CallLog {
  readonly calls: UpstreamCall[] = [];
  #seen = 0;
  #previous = new Map<string, string>();

  /** Adds the calls among `requests` not seen yet (requests are appended, never changed). */
  update(requests: readonly RecordedRequest[]): UpstreamCall[] {
    for (; this.#seen < requests.length; this.#seen++) {
      const request = requests[this.#seen];
      const api = APIS[request.api];
      if (!api || request.status !== 200) continue;
      const key = `${request.caller}\u0000${api}\u0000${request.model}`;
      this.calls.push({
        api,
        model: request.model,
        caller: request.caller,
        bytes: new TextEncoder().encode(request.raw).length,
        promptChars: request.prompt.length,
        cache: request.cache,
        repeatedChars: commonPrefix(this.#previous.get(key) ?? "", request.prompt),
        text: request.prompt,
      });
      this.#previous.set(key, request.prompt);
    }
    return this.calls;
  }
}

/** Starts the upstream on 127.0.0.1:0; dispose it to stop. */
export function startCacheUpstream(reply: ReplyScript): CacheUpstream {
  const vendor = startFakeVendor({
    answer: (request) => ({ text: reply({ text: request.prompt, caller: request.caller }) }),
  });
  const log = new CallLog();
  return {
    origin: vendor.origin,
    get calls() {
      return log.update(vendor.requests);
    },
    [Symbol.asyncDispose]: () => vendor.close(),
  };
}
