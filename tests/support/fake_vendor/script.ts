/**
 * The fake vendor's script: rules that match a request (API, model, caller, path, prompt text,
 * header, or a predicate) and say how to answer it — text, JSON, a tool call, several parts, an
 * HTTP failure, a hang, or a response of the test's own — with an optional delay and latency
 * profile, used a set number of times or for good.
 */
import type { LatencyProfile } from "./latency.ts";
import type { Failure, Part } from "./reply.ts";
import type { Api, RecordedRequest } from "./request.ts";

/** How to answer one request. Exactly one of the reply fields is meant to be set. */
export interface Answer {
  text?: string;
  /** Sent as text: the value's JSON. */
  json?: unknown;
  tool?: { name: string; input: Record<string, unknown>; id?: string };
  parts?: Part[];
  /** An HTTP error with the vendor's error body. */
  fail?: Failure;
  /** Never answer (until the client goes away or the fake closes). */
  hang?: boolean;
  /** A response the test builds itself (raw frames, gated streams, odd bodies). */
  response?: (request: RecordedRequest) => Response | Promise<Response>;
  /** Extra wait before anything is sent (on top of the latency profile). */
  delayMs?: number;
  /** The latency model for this answer (else the fake's profile for its caller or model). */
  profile?: LatencyProfile;
  /** The last output token waits for this (a test holding an answer mid-stream). */
  holdLast?: Promise<unknown>;
}

/** Which requests a rule is for; every field given must match. */
export interface Matcher {
  api?: Api;
  model?: string | RegExp;
  caller?: string;
  path?: string | RegExp;
  /** Matched against the prompt text. */
  prompt?: string | RegExp;
  header?: { name: string; value: string | RegExp };
  when?: (request: RecordedRequest) => boolean;
}

export interface Rule {
  match: Matcher;
  answer: Answer | ((request: RecordedRequest) => Answer);
  /** How many requests this rule answers before it is spent (default: all). */
  times?: number;
}

function fits(pattern: string | RegExp | undefined, value: string, exact: boolean): boolean {
  if (pattern === undefined) return true;
  if (typeof pattern !== "string") return pattern.test(value);
  return exact ? pattern === value : value.includes(pattern);
}

/** Whether `matcher` accepts `request`. */
export function matches(matcher: Matcher, request: RecordedRequest): boolean {
  if (matcher.api && matcher.api !== request.api) return false;
  if (matcher.caller !== undefined && matcher.caller !== request.caller) return false;
  if (!fits(matcher.model, request.model, true)) return false;
  if (!fits(matcher.path, request.path, true)) return false;
  if (!fits(matcher.prompt, request.prompt, false)) return false;
  if (matcher.header) {
    const value = request.headers.get(matcher.header.name);
    if (value === null || !fits(matcher.header.value, value, true)) return false;
  }
  return matcher.when ? matcher.when(request) : true;
}

/** Rules in the order added; the first unspent match answers. */
export class Script {
  #rules: { rule: Rule; used: number }[] = [];

  add(rule: Rule): void {
    this.#rules.push({ rule, used: 0 });
  }

  clear(): void {
    this.#rules = [];
  }

  /** The answer for `request`, spending one use of its rule; undefined when no rule matches. */
  answer(request: RecordedRequest): Answer | undefined {
    for (const entry of this.#rules) {
      const { rule } = entry;
      if (rule.times !== undefined && entry.used >= rule.times) continue;
      if (!matches(rule.match, request)) continue;
      entry.used++;
      return typeof rule.answer === "function" ? rule.answer(request) : rule.answer;
    }
    return undefined;
  }
}

/** An answer's parts (text, JSON, tool call or parts), or undefined for a failure or hang. */
export function partsOf(answer: Answer): Part[] | undefined {
  if (answer.parts) return answer.parts;
  if (answer.tool) return [{ tool: answer.tool }];
  if (answer.json !== undefined) return [{ text: JSON.stringify(answer.json) }];
  if (answer.text !== undefined) return [{ text: answer.text }];
  return undefined;
}
