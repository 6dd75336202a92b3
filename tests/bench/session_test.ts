/**
 * The session benchmark (issue 24, point 4): the stub's caches behave as the real APIs do, the
 * built session has the shape and growth asked for, and a short session through the real server
 * meets the targets (no child over budget, Anthropic children read ≥ 80 % from the cache after
 * the first request, cost with caching ≤ 0.35× without).
 */
import assert from "node:assert/strict";
import {
  anthropicBlocks,
  AutomaticCache,
  ExplicitCache,
  LOOKBACK_BLOCKS,
  type PromptBlock,
} from "../support/fake_vendor/prompt_cache.ts";
import { startCacheUpstream } from "../../scripts/bench/upstream_calls.ts";
import {
  runSession,
  sessionAgents,
  sessionConfig,
  sessionReply,
} from "../../scripts/bench/scenarios/session.ts";
import { requestTable, sessionTotals } from "../../scripts/bench/session_report.ts";
import { claudeCodeSession, conversationChars } from "../support/session_transcript.ts";
import { OPT_IN_SCENARIOS, selectScenarios } from "../../scripts/bench/main.ts";
import { startServer } from "../../src/server/wiring.ts";
import { configOf } from "../support/test_config.ts";

const block = (text: string, breakpoint = false): PromptBlock => ({ text, breakpoint });
const big = (tag: string) => `${tag} ${"x".repeat(5000)}`;

Deno.test("stub cache (Anthropic): entries at breakpoints, read back within 20 blocks", () => {
  const cache = new ExplicitCache();
  // 5007 + 5002 + 5002 + 4 characters: tokens at four characters each.
  const first = [block(big("system"), true), block(big("a")), block(big("b"), true), block("task")];
  assert.deepEqual(cache.use("m", first), { total: 3754, read: 0, write: 3753 });
  // The next turn adds blocks after the old breakpoint: the prefix up to it is read.
  const second = [...first.slice(0, 3), block(big("c")), block(big("d"), true), block("task")];
  assert.deepEqual(cache.use("m", second), { total: 6255, read: 3753, write: 6254 - 3753 });
  // Another model has its own cache; a changed early block misses everything after it.
  assert.equal(cache.use("other", second).read, 0);
  const changed = [block(big("system!"), true), ...second.slice(1)];
  assert.equal(cache.use("m", changed).read, 0);
  // A breakpoint more than 20 blocks past an entry does not find it.
  const far = [
    block(big("system"), true),
    block(big("a")),
    block(big("b")),
    ...Array.from({ length: LOOKBACK_BLOCKS }, (_, i) => block(`filler ${i}`)),
    block(big("end"), true),
  ];
  const fresh = new ExplicitCache();
  fresh.use("m", first);
  assert.equal(fresh.use("m", far).read, 1252, "only the system prompt is within reach");
});

Deno.test("stub cache (Anthropic): blocks in API order, breakpoints from cache_control", () => {
  const blocks = anthropicBlocks({
    tools: [{ name: "Read", cache_control: { type: "ephemeral" } }],
    system: [{ type: "text", text: "S", cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: [{ type: "text", text: "U" }] }, {
      role: "assistant",
      content: "A",
    }],
  });
  assert.deepEqual(blocks, [
    { text: '{"name":"Read"}', breakpoint: true },
    { text: "S", breakpoint: true },
    { text: "user: U", breakpoint: false },
    { text: "assistant: A", breakpoint: false },
  ]);
});

Deno.test("stub cache (OpenAI): the longest seen prefix from 1024 tokens in 128-token steps", () => {
  const cache = new AutomaticCache();
  const base = "p".repeat(10_000);
  assert.equal(cache.use("m", base).read, 0);
  assert.equal(cache.use("m", `${base} and more`).read, 1024 + 128 * 11);
  assert.equal(cache.use("m", "short").read, 0);
  assert.equal(cache.use("m", `q${base}`).read, 0, "a different start is a miss");
});

Deno.test("session transcript: 60 requests, each repeating the last, growing to ~400k chars", () => {
  const bodies = claudeCodeSession({ requests: 60, finalChars: 400_000, cwd: "/tmp/project" });
  assert.equal(bodies.length, 60);
  const sizes = bodies.map((b) => conversationChars(b.messages as Record<string, unknown>[]));
  assert.ok(Math.abs(sizes.at(-1)! - 400_000) < 8_000, `${sizes.at(-1)}`);
  sizes.forEach((size, i) => i > 0 && assert.ok(size > sizes[i - 1]));
  for (let i = 1; i < bodies.length; i++) {
    const before = JSON.stringify(bodies[i - 1].messages).slice(0, -1);
    assert.ok(JSON.stringify(bodies[i].messages).startsWith(before), `request ${i + 1}`);
  }
  const last = bodies.at(-1)!;
  const messages = last.messages as { role: string; content: { type: string }[] }[];
  assert.equal(messages[1].role, "system", "the environment as a system message");
  const types = new Set(messages.flatMap((m) => m.content.map((c) => c.type)));
  for (const type of ["text", "thinking", "tool_use", "tool_result"]) assert.ok(types.has(type));
  assert.ok((last.tools as unknown[]).length >= 10);
  assert.deepEqual(
    claudeCodeSession({ requests: 60, finalChars: 400_000, cwd: "/tmp/project" }),
    bodies,
    "the same session every run",
  );
});

Deno.test("session bench is opt-in", () => {
  assert.deepEqual(selectScenarios([], "session", OPT_IN_SCENARIOS).map((s) => s.name), [
    "session",
  ]);
});

Deno.test("session through the real server: within budget, cached, cheaper", async () => {
  const key = "COUNCIL_TEST_SESSION_STUB_KEY";
  Deno.env.set(key, "stub");
  await using upstream = startCacheUpstream(sessionReply);
  const entries = sessionAgents(upstream.origin, key);
  const config = { ...configOf(sessionConfig(entries) as Parameters<typeof configOf>[0]), port: 0 };
  const server = startServer(config, { graceMs: 0, abortGraceMs: 3000 });
  try {
    const bodies = claudeCodeSession({ requests: 24, finalChars: 220_000, cwd: "/tmp" });
    const { requests, errors } = await runSession(server.origin, upstream, entries, bodies);
    assert.deepEqual(errors, []);
    assert.equal(requests.length, 24);
    // Three children and the synthesizer on every request.
    assert.ok(requests.every((r) => r.calls.length === 4), "four calls per request");
    const totals = sessionTotals(requests);
    assert.ok(totals.maxBudgetShare <= 1, `largest prompt ${totals.maxBudgetShare} of budget`);
    assert.ok(totals.anthropicReadShare >= 0.8, `read share ${totals.anthropicReadShare}`);
    assert.ok(totals.usdCached <= 0.35 * totals.usdUncached, "cost with caching ≤ 0.35×");
    // The small-budget child's prompts were elided, and the elided ones still hit the cache.
    const small = requests.flatMap((r) => r.calls.filter((c) => c.caller === "sonnet-60k"));
    // Against a full-budget child's prompt of the same request (calls are in arrival order).
    const full = requests.at(-1)!.calls.find((c) => c.caller === "gpt")!;
    assert.ok(
      small.at(-1)!.tokens < full.tokens * 0.8,
      `${small.at(-1)!.tokens} vs ${full.tokens}`,
    );
    assert.match(requestTable(requests), /^\| 24 +\| 2\d\dk +\| \d+ KB · [\d.]+k · \d+% · \d+% /m);
  } finally {
    await server.shutdown();
    Deno.env.delete(key);
  }
});
