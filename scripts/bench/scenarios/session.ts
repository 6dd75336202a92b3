/**
 * A long session: a 60-request Claude Code-shaped session (tests/support/session_transcript.ts, growing to
 * about 400k characters) through the real gateway, fanned out on every request to three HTTP
 * children — two Anthropic (one with a small `contextTokens`, so its prompts are elided) and
 * one OpenAI-compatible — on a stub upstream that reports cache reads and writes by prefix as
 * the real APIs do (upstream_calls.ts). Per host request: bytes and estimated tokens sent to
 * each child, the share repeating its previous call, the share read from the cache, and USD
 * with and without caching. Targets: no child over its budget; Anthropic children read ≥ 80 %
 * of their input from the cache after the first request; the session costs ≤ 0.35× uncached.
 */
import { AgentSchema } from "../../../src/config/mod.ts";
import { contextTokensOf } from "../../../src/agents/context_budget.ts";
import { findCachePrice, mergePricing } from "../../../src/agents/cost.ts";
import {
  type CacheUpstream,
  CALLER_HEADER,
  startCacheUpstream,
  type UpstreamCall,
} from "../upstream_calls.ts";
import { streamMessages } from "../client.ts";
import { startGateway } from "../processes.ts";
import { type Figure, target } from "../results.ts";
import type { Scenario } from "../scenario.ts";
import {
  callFigures,
  type ChildInfo,
  type RequestFigures,
  requestTable,
  sessionTotals,
} from "../session_report.ts";
import { claudeCodeSession, conversationChars } from "../../../tests/support/session_transcript.ts";

/** The gateway reads the stub's "key" from this variable of its environment. */
const KEY_VARIABLE = "COUNCIL_BENCH_STUB_KEY";
/** Output tokens the stub reports for every reply. */
const OUTPUT_TOKENS = 50;
const SMALL_BUDGET = 60_000;

/** The stub's replies: distinct proposals per child (so the synthesizer picks), then a pick. */
export function sessionReply(call: Pick<UpstreamCall, "text" | "caller">): string {
  if (call.text.includes("=== Proposed next steps ===")) return '{"choose": 1}';
  if (call.text.includes('{"kind":"tool","name":')) {
    return JSON.stringify({
      kind: "tool",
      name: "Read",
      input: { file_path: `/work/project/src/${call.caller}.ts` },
    });
  }
  return "The session tests pass again.";
}

/** The session's council: three HTTP children on the stub, each naming itself. */
export function sessionAgents(origin: string, keyVariable = KEY_VARIABLE) {
  const http = (name: string, entry: Record<string, unknown>) => ({
    name,
    apiKeyEnv: keyVariable,
    headers: { [CALLER_HEADER]: name },
    ...entry,
  });
  return [
    http("opus", { runner: "anthropic", model: "claude-opus-4-5", baseUrl: origin }),
    http("sonnet-60k", {
      runner: "anthropic",
      model: "claude-sonnet-4-5",
      baseUrl: origin,
      contextTokens: SMALL_BUDGET,
    }),
    http("gpt", { runner: "openai", model: "gpt-5.5", baseUrl: `${origin}/v1` }),
  ];
}

/** Gateway settings for the session: every request fans out to every child. */
export function sessionConfig(entries: Record<string, unknown>[]) {
  return {
    fanOutPolicy: "always",
    fanOutScope: "every-turn",
    councilSize: entries.length,
    defaultAgents: entries,
  };
}

function childInfo(entries: Record<string, unknown>[]): Map<string, ChildInfo> {
  const prices = mergePricing();
  return new Map(entries.map((entry) => {
    const agent = { ...AgentSchema.parse(entry), name: String(entry.name) };
    const price = findCachePrice(prices, agent.model);
    if (!price) throw new Error(`no price for ${agent.model}`);
    return [agent.name, { budgetTokens: contextTokensOf(agent), price }];
  }));
}

function figuresOf(totals: ReturnType<typeof sessionTotals>, note: string): Figure[] {
  const f = (name: string, unit: string, gateway: number, extra: Partial<Figure> = {}): Figure => ({
    scenario: "session",
    name: `session: ${name}`,
    unit,
    gateway,
    ...extra,
  });
  const ratio = totals.usdCached / totals.usdUncached;
  return [
    f("host requests", "", totals.requests, { note }),
    f("upstream calls", "", totals.calls),
    f("MB sent to children", "MB", totals.bytes / 1024 / 1024),
    f("input tokens sent (est.)", "k", totals.tokens / 1000),
    f("largest prompt / its child's budget", "%", totals.maxBudgetShare * 100, {
      target: target("≤ 100 %", totals.maxBudgetShare * 100, 100),
    }),
    f("repeated prefix share, requests 2+", "%", totals.prefixShare * 100),
    f("Anthropic input read from cache, requests 2+", "%", totals.anthropicReadShare * 100, {
      target: {
        text: "≥ 80 %",
        pass: totals.anthropicReadShare >= 0.8,
      },
    }),
    f("USD with caching", "USD", totals.usdCached),
    f("USD without caching", "USD", totals.usdUncached),
    f("cost with caching / without", "×", ratio, { target: target("≤ 0.35×", ratio, 0.35) }),
  ];
}

/**
 * Sends the session's requests one by one to a gateway whose children call `upstream`, and
 * measures the calls each request caused.
 */
export async function runSession(
  gatewayOrigin: string,
  upstream: CacheUpstream,
  entries: Record<string, unknown>[],
  bodies: Record<string, unknown>[],
  log: (line: string) => void = () => {},
): Promise<{ requests: RequestFigures[]; errors: string[] }> {
  const children = childInfo(entries);
  const requests: RequestFigures[] = [];
  const errors: string[] = [];
  for (const [index, body] of bodies.entries()) {
    const before = upstream.calls.length;
    const turn = await streamMessages(gatewayOrigin, body);
    if (turn.error) errors.push(`request ${index + 1}: ${turn.error}`);
    const calls = upstream.calls.slice(before).map((call) =>
      callFigures(call, children.get(call.caller)!, OUTPUT_TOKENS)
    );
    const transcriptChars = conversationChars(body.messages as Record<string, unknown>[]);
    requests.push({ index, transcriptChars, calls });
    const one = sessionTotals([requests.at(-1)!]);
    log(
      `request ${index + 1}/${bodies.length}: ${transcriptChars} chars, ${calls.length} calls, ` +
        `$${one.usdCached.toFixed(3)} (uncached $${one.usdUncached.toFixed(3)})`,
    );
  }
  return { requests, errors };
}

export const session: Scenario = {
  name: "session",
  description: "60-request Claude Code-shaped session, HTTP children on a caching stub: " +
    "bytes, tokens, cache reads, USD",
  async run(context) {
    const count = context.quick ? 12 : 60;
    const finalChars = context.quick ? 80_000 : 400_000;
    Deno.env.set(KEY_VARIABLE, "bench");
    await using upstream = startCacheUpstream(sessionReply);
    const entries = sessionAgents(upstream.origin);
    const gateway = await startGateway(context, sessionConfig(entries));
    let measured: Awaited<ReturnType<typeof runSession>>;
    try {
      const bodies = claudeCodeSession({ requests: count, finalChars, cwd: context.tempDir });
      measured = await runSession(gateway.origin, upstream, entries, bodies, context.log);
    } finally {
      await gateway.stop();
      Deno.env.delete(KEY_VARIABLE);
    }
    const { requests, errors } = measured;
    const totals = sessionTotals(requests);
    const budgets = [...childInfo(entries)].map(([name, c]) => `${name} budget ${c.budgetTokens}`);
    const note = `final transcript ${requests.at(-1)?.transcriptChars ?? 0} characters; ` +
      `children: ${budgets.join(", ")}` +
      (errors.length ? `; ${errors.length} failed requests, first: ${errors[0]}` : "");
    return {
      figures: figuresOf(totals, note),
      details: { totals, requests, errors },
      tables: [
        `Session, per host request (child: KB sent · est. input tokens · share repeating ` +
        `its previous call · share read from cache):\n\n${requestTable(requests)}`,
      ],
    };
  },
};
