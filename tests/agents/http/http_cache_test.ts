/**
 * Structured, cacheable prompts for HTTP children (issue 24, point 2): the conversation as
 * messages, Anthropic `cache_control` on the stable prefix, an OpenAI `prompt_cache_key` from the
 * session, the prefix identical from one turn to the next, and cache reads and writes in usage
 * and cost.
 */
import assert from "node:assert/strict";
import { anthropicMessages, openaiMessages } from "../../../src/agents/http/prompt_messages.ts";
import type { StructuredPrompt } from "../../../src/agents/types.ts";
import { cacheKeyOf } from "../../../src/council/prompt/compose.ts";
import { actionPrompt } from "../../../src/council/prompt/prompts.ts";
import type { ToolSpec, TranscriptEntry } from "../../../src/council/types.ts";
import { cleanBaseEnv, testRunner } from "../../support/agent_runner.ts";
import {
  anthropicFrames,
  httpAgent,
  openaiFrames,
  sseResponse,
  startStub,
} from "../../support/model_api_stub.ts";

const SYSTEM = "You are a coding assistant working in /w/project.";
const TOOLS: ToolSpec[] = [
  { name: "Read", description: "Reads a file.", inputSchema: { type: "object" } },
];

/** The transcript after `n` host requests: a first ask, then one tool round trip each. */
function transcriptAt(n: number): TranscriptEntry[] {
  const out: TranscriptEntry[] = [{ kind: "user", text: "Find why the build fails." }];
  for (let i = 0; i < n; i++) {
    out.push({ kind: "assistant", text: `Checking file ${i}.` });
    out.push({ kind: "tool_call", id: `t${i}`, name: "Read", input: { file_path: `/w/${i}.ts` } });
    out.push({ kind: "tool_result", id: `t${i}`, text: `contents of ${i}`, isError: false });
  }
  return out;
}

const fit = { contextTokens: 100_000, cacheKey: cacheKeyOf("session-1") };
const turn = (n: number): StructuredPrompt =>
  actionPrompt({ system: SYSTEM, transcript: transcriptAt(n) }, TOOLS, true, fit);

type Block = { type?: unknown; text?: unknown; cache_control?: unknown };
type Body = ReturnType<typeof anthropicMessages>;

/** Every block in the order the API reads them (system, then messages), with its role. */
function blocks(body: Body): { role: string; block: Block }[] {
  return [
    ...(body.system ?? []).map((block) => ({ role: "system", block: block as Block })),
    ...body.messages.flatMap((m) =>
      (m.content as Block[]).map((block) => ({ role: m.role, block: block as Block }))
    ),
  ];
}

Deno.test("anthropic body: system, alternating messages, the task last and uncached", () => {
  const body = anthropicMessages(turn(3));
  assert.equal(body.system?.length, 1);
  const system = String(body.system![0].text);
  assert.match(system, /^=== Instructions the assistant is operating under ===/);
  assert.match(system, /=== Tools the assistant may call ===\n- Read/);
  assert.deepEqual(body.system![0].cache_control, { type: "ephemeral" });
  const roles = body.messages.map((m) => m.role);
  assert.equal(roles[0], "user");
  roles.forEach((role, i) => i > 0 && assert.notEqual(role, roles[i - 1], "roles alternate"));
  const all = blocks(body);
  const texts = all.map((b) => String(b.block.text));
  assert.equal(texts[1], "Find why the build fails.", "a plain user entry is its own text");
  assert.ok(texts.includes('[assistant called tool Read (call t0)]\n{"file_path":"/w/0.ts"}'));
  assert.ok(texts.includes("[result of call t2]\ncontents of 2"));
  assert.match(texts.at(-1)!, /^=== Your task ===/);
  assert.equal(all.at(-1)!.block.cache_control, undefined, "the task is not cached");
  const breakpoints = all.filter((b) => b.block.cache_control).length;
  assert.ok(breakpoints >= 2 && breakpoints <= 4, `${breakpoints} breakpoints`);
  assert.deepEqual(all.at(-2)!.block.cache_control, { type: "ephemeral" }, "end of conversation");
});

Deno.test("anthropic body: each turn repeats the previous turn's cached prefix exactly", () => {
  for (let n = 0; n < 30; n++) {
    const before = blocks(anthropicMessages(turn(n)));
    const after = blocks(anthropicMessages(turn(n + 1)));
    const lastBreakpoint = before.findLastIndex((b) => b.block.cache_control);
    const strip = (list: typeof before) =>
      list.slice(0, lastBreakpoint + 1).map(({ role, block }) => [role, block.text]);
    assert.deepEqual(strip(after), strip(before), `turn ${n + 1}`);
    // The next turn's lookback (20 blocks) reaches the previous turn's last breakpoint.
    const next = after.findLastIndex((b) => b.block.cache_control);
    assert.ok(next - lastBreakpoint <= 20);
  }
});

Deno.test("openai body: the session's cache key, the prefix repeated, the request appended", () => {
  const one = openaiMessages(turn(4));
  const two = openaiMessages(turn(5));
  assert.equal(one.prompt_cache_key, cacheKeyOf("session-1"));
  assert.equal(two.prompt_cache_key, one.prompt_cache_key);
  assert.match(one.prompt_cache_key!, /^council-[0-9a-f]{32}$/);
  assert.notEqual(cacheKeyOf("session-2"), cacheKeyOf("session-1"));
  assert.ok(!one.prompt_cache_key!.includes("session-1"));
  assert.equal(one.messages[0].role, "system");
  const text = (body: typeof one) => body.messages.map((m) => `${m.role}\n${m.content}`).join("\n");
  const content = (body: typeof one, i: number) => String(body.messages.at(i)!.content);
  const request = content(one, -1).indexOf("=== Your task ===");
  assert.ok(request > 0, "the request is appended to the last user message");
  const stable = text(one).slice(
    0,
    text(one).length - (content(one, -1).length - request),
  );
  assert.ok(text(two).startsWith(stable.trimEnd()), "turn 5 repeats turn 4 up to its request");
});

const KEY_ENV = cleanBaseEnv({ ANTHROPIC_API_KEY: "sk-ant-test" });

Deno.test("anthropic child: structured request over HTTP; usage reports cache reads and writes; cached prices", async () => {
  await using stub = startStub(() =>
    sseResponse(
      anthropicFrames(["ok"], { input: 100, output: 10, cacheRead: 9000, cacheWrite: 900 }),
    )
  );
  const agent = httpAgent("anthropic", stub.origin, { model: "claude-sonnet-4-5" });
  const result = await testRunner({ baseEnv: KEY_ENV })(agent, turn(2), { role: "child" });
  assert.equal(result.ok, true, result.error);
  const body = stub.requests[0].body as Body & { model: string };
  assert.equal(body.model, "claude-sonnet-4-5");
  assert.deepEqual(body.system?.[0].cache_control, { type: "ephemeral" });
  assert.ok(body.messages.length >= 3);
  assert.equal(result.usage.inputTokens, 10_000);
  assert.equal(result.usage.cacheReadTokens, 9000);
  assert.equal(result.usage.cacheWriteTokens, 900);
  // Sonnet: $3 input, $0.30 cache reads, $3.75 cache writes, $15 output per million.
  const expected = (100 * 3 + 9000 * 0.3 + 900 * 3.75 + 10 * 15) / 1e6;
  assert.ok(Math.abs(result.usage.costUsd - expected) < 1e-12, `${result.usage.costUsd}`);
});

Deno.test("openai child: prompt_cache_key sent; cached_tokens reported and priced", async () => {
  await using stub = startStub(() =>
    sseResponse(openaiFrames(["ok"], { input: 10_000, output: 10, cacheRead: 8000 }))
  );
  const agent = httpAgent("openai", `${stub.origin}/v1`, { model: "gpt-5-mini" });
  const result = await testRunner({ baseEnv: cleanBaseEnv({}) })(agent, turn(2), { role: "child" });
  assert.equal(result.ok, true, result.error);
  const body = stub.requests[0].body as { prompt_cache_key: string; messages: unknown[] };
  assert.equal(body.prompt_cache_key, cacheKeyOf("session-1"));
  assert.equal(result.usage.cacheReadTokens, 8000);
  // gpt-5-mini: $0.25 input, cached a tenth of it, $2 output per million.
  const expected = (2000 * 0.25 + 8000 * 0.025 + 10 * 2) / 1e6;
  assert.ok(Math.abs(result.usage.costUsd - expected) < 1e-12, `${result.usage.costUsd}`);
});
