/**
 * The session benchmark's arithmetic: each upstream call priced with and without its cache
 * reading, grouped by host request and child, the per-request table, and the session totals the
 * targets are checked against. Pure functions only.
 */
import type { Price } from "../../src/config/mod.ts";
import { costOf } from "../../src/agents/cost.ts";
import { budgetTokens } from "../../src/agents/context_budget.ts";
import type { UpstreamCall } from "./upstream_calls.ts";
import { formatTable } from "./results.ts";

/** What the bench knows about each child: its budget and its model's price. */
export interface ChildInfo {
  budgetTokens: number;
  price: Price;
}

/** One upstream call, measured. */
export interface CallFigures {
  caller: string;
  api: UpstreamCall["api"];
  bytes: number;
  /** Estimated input tokens (as the stub counts them, four characters each). */
  tokens: number;
  /** The prompt's size against the child's budget (budget tokens / budget). */
  budgetShare: number;
  /** Share of the prompt that repeats the same child's previous call from its start. */
  prefixShare: number;
  /** Share of the input tokens read from the cache. */
  readShare: number;
  cacheRead: number;
  cacheWrite: number;
  usdCached: number;
  usdUncached: number;
}

/** A host request: its conversation's size and the calls it caused. */
export interface RequestFigures {
  index: number;
  transcriptChars: number;
  calls: CallFigures[];
}

export function callFigures(
  call: UpstreamCall,
  child: ChildInfo,
  outputTokens: number,
): CallFigures {
  const { total, read, write } = call.cache;
  return {
    caller: call.caller,
    api: call.api,
    bytes: call.bytes,
    tokens: total,
    budgetShare: budgetTokens(call.promptChars) / child.budgetTokens,
    prefixShare: call.promptChars ? call.repeatedChars / call.promptChars : 0,
    readShare: total ? read / total : 0,
    cacheRead: read,
    cacheWrite: write,
    usdCached: costOf(child.price, total, outputTokens, { read, write }),
    usdUncached: costOf(child.price, total, outputTokens),
  };
}

export interface SessionTotals {
  requests: number;
  calls: number;
  bytes: number;
  tokens: number;
  usdCached: number;
  usdUncached: number;
  /** Largest prompt against its child's budget. */
  maxBudgetShare: number;
  /** Anthropic children's input tokens read from the cache, requests after the first. */
  anthropicReadShare: number;
  /** Tokens that repeat the same child's previous call, requests after the first. */
  prefixShare: number;
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((n, item) => n + of(item), 0);
}

export function sessionTotals(requests: readonly RequestFigures[]): SessionTotals {
  const calls = requests.flatMap((r) => r.calls);
  const later = requests.filter((r) => r.index > 0).flatMap((r) => r.calls);
  const anthropic = later.filter((c) => c.api === "anthropic");
  return {
    requests: requests.length,
    calls: calls.length,
    bytes: sum(calls, (c) => c.bytes),
    tokens: sum(calls, (c) => c.tokens),
    usdCached: sum(calls, (c) => c.usdCached),
    usdUncached: sum(calls, (c) => c.usdUncached),
    maxBudgetShare: Math.max(0, ...calls.map((c) => c.budgetShare)),
    anthropicReadShare: sum(anthropic, (c) => c.cacheRead) /
      Math.max(1, sum(anthropic, (c) => c.tokens)),
    prefixShare: sum(later, (c) => c.prefixShare * c.tokens) /
      Math.max(1, sum(later, (c) => c.tokens)),
  };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const usd = (x: number) => `$${x.toFixed(3)}`;

/** `KB · ktok · prefix% · read%` of a call. */
function cell(call: CallFigures | undefined): string {
  if (!call) return "";
  return `${(call.bytes / 1024).toFixed(0)} KB · ${(call.tokens / 1000).toFixed(1)}k · ` +
    `${pct(call.prefixShare)} · ${pct(call.readShare)}`;
}

/**
 * One row per host request, one column per child call (a child called twice, as child and as
 * synthesizer, gets two): bytes sent, estimated tokens, share repeating its previous call, share
 * read from the cache; then the request's cost with and without caching.
 */
export function requestTable(requests: readonly RequestFigures[]): string {
  const columns: string[] = [];
  for (const request of requests) {
    const seen = new Map<string, number>();
    for (const call of request.calls) {
      const n = (seen.get(call.caller) ?? 0) + 1;
      seen.set(call.caller, n);
      const name = n === 1 ? call.caller : `${call.caller} #${n}`;
      if (!columns.includes(name)) columns.push(name);
    }
  }
  const rows = requests.map((request) => {
    const byColumn = new Map<string, CallFigures>();
    const seen = new Map<string, number>();
    for (const call of request.calls) {
      const n = (seen.get(call.caller) ?? 0) + 1;
      seen.set(call.caller, n);
      byColumn.set(n === 1 ? call.caller : `${call.caller} #${n}`, call);
    }
    return [
      String(request.index + 1),
      `${(request.transcriptChars / 1000).toFixed(0)}k`,
      ...columns.map((c) => cell(byColumn.get(c))),
      usd(sum(request.calls, (c) => c.usdCached)),
      usd(sum(request.calls, (c) => c.usdUncached)),
    ];
  });
  return formatTable(
    [
      "Req",
      "Transcript",
      ...columns.map((c) => `${c} (KB · tokens · prefix · read)`),
      "USD",
      "USD uncached",
    ],
    rows,
  );
}
