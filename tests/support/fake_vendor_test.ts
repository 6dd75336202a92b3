/**
 * The fake vendor API: each protocol streamed and not, scripted answers and failures, prompt-cache
 * accounting, the request record, the latency model on a virtual clock, and the official SDKs
 * talking to it.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type LatencyProfile, startFakeVendor, VirtualClock } from "./fake_vendor/mod.ts";
import { schedule, seededRandom, tokenPieces } from "./fake_vendor/latency.ts";
import { readSse, SseReader } from "./sse_reader.ts";

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

const ask = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "claude-test",
  max_tokens: 100,
  messages: [{ role: "user", content: text }],
  ...extra,
});

Deno.test("fake vendor: Messages streams the scripted text in token deltas, with usage", async () => {
  await using vendor = startFakeVendor().on({ prompt: "hello" }, { text: "Hi there, friend." });
  const records = await readSse(
    await post(`${vendor.origin}/v1/messages`, ask("hello", { stream: true })),
  );
  const events = records.map((r) => r.event);
  assert.equal(events[0], "message_start");
  assert.deepEqual(events.slice(-2), ["message_delta", "message_stop"]);
  for (const r of records) assert.equal(r.data.type, r.event);
  const deltas = records.filter((r) => r.event === "content_block_delta");
  assert.equal(deltas.map((r) => r.data.delta.text).join(""), "Hi there, friend.");
  assert.equal(deltas.length, tokenPieces("Hi there, friend.").length);
  const usage = records[0].data.message.usage;
  assert.ok(usage.input_tokens > 0);
  assert.equal(usage.cache_read_input_tokens, 0);
  assert.equal(usage.cache_creation_input_tokens, 0);
  assert.equal(records.at(-2)!.data.usage.output_tokens, deltas.length);
});

Deno.test("fake vendor: Messages JSON and a streamed tool call", async () => {
  await using vendor = startFakeVendor()
    .on({ prompt: "json" }, { json: { choose: 2 } })
    .on({ prompt: "tool" }, {
      parts: [{ text: "Let me look." }, {
        tool: { name: "Read", input: { file_path: "/tmp/a.txt" } },
      }],
    });
  const json = await (await post(`${vendor.origin}/v1/messages`, ask("json"))).json();
  assert.deepEqual(json.content, [{ type: "text", text: '{"choose":2}' }]);
  assert.equal(json.stop_reason, "end_turn");
  const records = await readSse(
    await post(`${vendor.origin}/v1/messages`, ask("tool", { stream: true })),
  );
  const start = records.find((r) => r.data?.content_block?.type === "tool_use")!;
  assert.equal(start.data.content_block.name, "Read");
  const input = records.filter((r) => r.data?.delta?.type === "input_json_delta")
    .map((r) => r.data.delta.partial_json).join("");
  assert.deepEqual(JSON.parse(input), { file_path: "/tmp/a.txt" });
  assert.equal(
    records.find((r) => r.event === "message_delta")!.data.delta.stop_reason,
    "tool_use",
  );
});

Deno.test("fake vendor: Responses streams the sequence Codex reads, and answers JSON", async () => {
  await using vendor = startFakeVendor({ answer: { text: "Codex answer." } });
  const body = { model: "gpt-test", input: [{ role: "user", content: "hi" }], stream: true };
  const records = await readSse(await post(`${vendor.origin}/v1/responses`, body));
  assert.deepEqual(records.map((r) => r.event).filter((e) => !e!.endsWith(".delta")), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  records.forEach((r, i) => assert.equal(r.data.sequence_number, i));
  const text = records.filter((r) => r.event === "response.output_text.delta")
    .map((r) => r.data.delta).join("");
  assert.equal(text, "Codex answer.");
  const done = records.at(-1)!.data.response;
  assert.equal(done.output[0].content[0].text, "Codex answer.");
  assert.equal(done.usage.input_tokens_details.cached_tokens, 0);
  const json = await (await post(`${vendor.origin}/v1/responses`, { ...body, stream: false }))
    .json();
  assert.equal(json.status, "completed");
  assert.equal(json.output[0].content[0].text, "Codex answer.");
});

Deno.test("fake vendor: Responses and Chat Completions stream a tool call", async () => {
  const tool = { name: "exec_command", input: { cmd: "ls" } };
  await using vendor = startFakeVendor({ answer: { tool } });
  const responses = await readSse(
    await post(`${vendor.origin}/v1/responses`, { model: "m", input: "x", stream: true }),
  );
  const item = responses.find((r) => r.event === "response.output_item.done")!.data.item;
  assert.equal(item.type, "function_call");
  assert.deepEqual(JSON.parse(item.arguments), { cmd: "ls" });
  const chat = await readSse(
    await post(`${vendor.origin}/v1/chat/completions`, {
      model: "m",
      messages: [{ role: "user", content: "x" }],
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  assert.equal(chat.at(-1)!.data, "[DONE]");
  const args = chat.flatMap((r) => r.data?.choices?.[0]?.delta?.tool_calls ?? [])
    .map((c: { function: { arguments: string } }) => c.function.arguments).join("");
  assert.deepEqual(JSON.parse(args), { cmd: "ls" });
  assert.equal(chat.at(-2)!.data.usage.prompt_tokens_details.cached_tokens, 0);
});

Deno.test("fake vendor: Chat Completions JSON, and a stream without usage unless asked", async () => {
  await using vendor = startFakeVendor({ answer: { text: "Chat answer." } });
  const body = { model: "m", messages: [{ role: "user", content: "x" }] };
  const json = await (await post(`${vendor.origin}/v1/chat/completions`, body)).json();
  assert.equal(json.choices[0].message.content, "Chat answer.");
  assert.equal(json.choices[0].finish_reason, "stop");
  const chunks = await readSse(
    await post(`${vendor.origin}/v1/chat/completions`, { ...body, stream: true }),
  );
  assert.ok(chunks.every((r) => r.data === "[DONE]" || !r.data.usage));
  const text = chunks.map((r) => r.data?.choices?.[0]?.delta?.content ?? "").join("");
  assert.equal(text, "Chat answer.");
});

Deno.test("fake vendor: Gemini generateContent, streamGenerateContent?alt=sse, countTokens", async () => {
  await using vendor = startFakeVendor({ answer: { text: "Gemini answer." } });
  const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
  const base = `${vendor.origin}/v1beta/models/gemini-test`;
  const json = await (await post(`${base}:generateContent`, body)).json();
  assert.equal(json.candidates[0].content.parts[0].text, "Gemini answer.");
  assert.equal(json.candidates[0].finishReason, "STOP");
  assert.equal(json.modelVersion, "gemini-test");
  const chunks = await readSse(await post(`${base}:streamGenerateContent?alt=sse`, body));
  const text = chunks.map((r) => r.data.candidates[0].content.parts[0].text).join("");
  assert.equal(text, "Gemini answer.");
  assert.equal(chunks.at(-1)!.data.usageMetadata.cachedContentTokenCount, 0);
  const array = await (await post(`${base}:streamGenerateContent`, body)).json();
  assert.equal(
    array.map((c: typeof json) => c.candidates[0].content.parts[0].text).join(""),
    "Gemini answer.",
    "without alt=sse, one JSON array of the chunks",
  );
  const count = await (await post(`${base}:countTokens`, body)).json();
  assert.ok(count.totalTokens > 0);
  assert.equal(vendor.requests[1].stream, true);
});

Deno.test("fake vendor: failures carry each vendor's error body, status and retry-after", async () => {
  await using vendor = startFakeVendor()
    .on({ api: "messages" }, { fail: { status: 529 } }, 1)
    .on({ api: "responses" }, { fail: { status: 429, retryAfterS: 7 } })
    .on({ api: "gemini" }, { fail: { status: 503 } })
    .on({ api: "chat" }, { fail: { status: 500 } });
  const overloaded = await post(`${vendor.origin}/v1/messages`, ask("x"));
  assert.equal(overloaded.status, 529);
  assert.equal((await overloaded.json()).error.type, "overloaded_error");
  const healed = await post(`${vendor.origin}/v1/messages`, ask("x"));
  assert.equal(healed.status, 200, "the rule was for one request only");
  await healed.body?.cancel();
  const limited = await post(`${vendor.origin}/v1/responses`, { model: "m", input: "x" });
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("retry-after"), "7");
  assert.equal((await limited.json()).error.code, "rate_limit_exceeded");
  const unavailable = await post(`${vendor.origin}/v1beta/models/g:generateContent`, {
    contents: [],
  });
  assert.equal(unavailable.status, 503);
  assert.equal((await unavailable.json()).error.status, "UNAVAILABLE");
  const internal = await post(`${vendor.origin}/v1/chat/completions`, { model: "m", messages: [] });
  assert.equal(internal.status, 500);
  assert.equal((await internal.json()).error.type, "server_error");
  assert.deepEqual(vendor.requests.map((r) => r.status), [529, 200, 429, 503, 500]);
});

Deno.test("fake vendor: a hang holds the request until the client gives up", async () => {
  await using vendor = startFakeVendor({ answer: { hang: true } });
  const abort = new AbortController();
  const pending = fetch(`${vendor.origin}/v1/messages`, {
    method: "POST",
    body: JSON.stringify(ask("x")),
    signal: abort.signal,
  }).then(() => "answered", () => "aborted");
  while (vendor.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(vendor.requests[0].status, 0, "nothing sent while hanging");
  abort.abort();
  assert.equal(await pending, "aborted");
  await vendor.clientGone;
});

Deno.test("fake vendor: cache reads are the longest prefix seen before, per model and key", async () => {
  await using vendor = startFakeVendor();
  const system = [{ type: "text", text: "s".repeat(8000), cache_control: { type: "ephemeral" } }];
  const call = (key: string, model = "claude-test") =>
    post(`${vendor.origin}/v1/messages`, ask("question", { system, model }), { "x-api-key": key })
      .then((r) => r.json());
  const first = await call("a");
  assert.equal(first.usage.cache_read_input_tokens, 0);
  assert.equal(first.usage.cache_creation_input_tokens, 2000);
  const second = await call("a");
  assert.equal(second.usage.cache_read_input_tokens, 2000);
  assert.equal((await call("b")).usage.cache_read_input_tokens, 0, "another key");
  assert.equal((await call("a", "other")).usage.cache_read_input_tokens, 0, "another model");
  const long = { model: "gpt-test", messages: [{ role: "user", content: "x".repeat(6000) }] };
  const chat = async (content: string) =>
    (await (await post(`${vendor.origin}/v1/chat/completions`, {
      ...long,
      messages: [...long.messages, { role: "user", content }],
    })).json()).usage.prompt_tokens_details.cached_tokens;
  assert.equal(await chat("one"), 0);
  assert.equal(await chat("two"), 1024 + 128 * 3, "the shared prefix, in 128-token steps");
});

Deno.test("fake vendor: every request is recorded with its path, headers, body and caller", async () => {
  await using vendor = startFakeVendor();
  const response = await post(`${vendor.origin}/v1/messages?beta=true`, ask("record me"), {
    "x-fake-caller": "opus",
    "anthropic-version": "2023-06-01",
  });
  await response.json();
  const [seen] = vendor.requests;
  assert.equal(seen.path, "/v1/messages");
  assert.equal(seen.query.get("beta"), "true");
  assert.equal(seen.api, "messages");
  assert.equal(seen.caller, "opus");
  assert.equal(seen.model, "claude-test");
  assert.equal(seen.headers.get("anthropic-version"), "2023-06-01");
  assert.deepEqual(seen.body, ask("record me"));
  assert.match(seen.prompt, /record me/);
  assert.equal(seen.status, 200);
  assert.equal((await fetch(`${vendor.origin}/nowhere`)).status, 404);
  assert.equal(vendor.requests[1].api, "unknown");
});

const PROFILE: LatencyProfile = {
  ttftMs: 1000,
  tokensPerSecond: 50,
  answerTokens: 20,
  jitter: 0.2,
  source: "test",
};

Deno.test("latency model: a seeded schedule is deterministic and within the jitter", () => {
  const a = schedule(PROFILE, 20, seededRandom(42));
  const b = schedule(PROFILE, 20, seededRandom(42));
  assert.deepEqual(a, b);
  assert.notDeepEqual(schedule(PROFILE, 20, seededRandom(43)), a);
  assert.ok(a.firstTokenMs >= 800 && a.firstTokenMs <= 1200, String(a.firstTokenMs));
  assert.equal(a.tokenAtMs.length, 20);
  const gap = a.tokenAtMs[1] - a.tokenAtMs[0];
  assert.ok(gap >= 1000 / 60 && gap <= 1000 / 40, String(gap));
});

Deno.test("latency model: a streamed answer is paced on the injected clock", async () => {
  const clock = new VirtualClock();
  const profile = { ...PROFILE, jitter: 0 };
  await using vendor = startFakeVendor({ clock, profile });
  const response = await post(`${vendor.origin}/v1/messages`, ask("x", { stream: true }));
  const records = await new SseReader(response).rest();
  const deltas = records.filter((r) => r.event === "content_block_delta");
  assert.equal(deltas.length, 20, "the profile's answer length");
  const sleeps = clock.sleeps.filter((ms) => ms > 0);
  assert.deepEqual(
    sleeps,
    [1000, ...Array(19).fill(20)],
    "the time to first token, then one token each 1/50 s",
  );
  assert.equal(vendor.requests[0].firstTokenAt, 1000);
  assert.equal(vendor.requests[0].repliedAt, 1000 + 19 * 20);
  const json = await (await post(`${vendor.origin}/v1/messages`, ask("x"))).json();
  assert.equal(json.usage.output_tokens, 20);
  assert.equal(clock.now() - vendor.requests[1].arrivedAt, 1000 + 19 * 20, "JSON after the whole");
});

Deno.test("latency model: reseeding starts the draws afresh, so the requests after it get the same latencies again", async () => {
  const clock = new VirtualClock();
  await using vendor = startFakeVendor({ clock, profile: PROFILE, seed: 5 });
  const firstTokens = async () => {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      await (await post(`${vendor.origin}/v1/messages`, ask("x"))).json();
      // The JSON reply's one wait (rounded: the clock's offset moves the last bits).
      times.push(Math.round(clock.sleeps.at(-1)! * 1000) / 1000);
    }
    return times;
  };
  const before = await firstTokens();
  assert.notEqual(new Set(before).size, 1, "each request draws anew");
  vendor.reseed(5);
  assert.deepEqual(await firstTokens(), before);
  vendor.reseed(6);
  assert.notDeepEqual(await firstTokens(), before);
});

Deno.test("latency model: profiles by caller, and a scripted delay on top", async () => {
  const clock = new VirtualClock();
  const slow = { ...PROFILE, jitter: 0, ttftMs: 3000 };
  await using vendor = startFakeVendor({ clock, profiles: { slow } })
    .on({ caller: "slow" }, { text: "late", delayMs: 500 });
  await (await post(`${vendor.origin}/v1/messages`, ask("x"), { "x-fake-caller": "slow" })).json();
  assert.equal(clock.now(), 3500);
  await (await post(`${vendor.origin}/v1/messages`, ask("x"))).json();
  assert.equal(clock.now(), 3500, "no profile: instant");
});

Deno.test("fake vendor: the official SDKs talk to it", async () => {
  await using vendor = startFakeVendor()
    .on({ api: "messages" }, { text: "From the fake." })
    .on({ api: "responses" }, { text: "From the fake too." });
  const anthropic = new Anthropic({ baseURL: vendor.origin, apiKey: "k", maxRetries: 0 });
  const streamed = await anthropic.messages.stream({
    model: "claude-test",
    max_tokens: 50,
    messages: [{ role: "user", content: "hi" }],
  }).finalMessage();
  const [block] = streamed.content;
  assert.equal(block.type === "text" ? block.text : block.type, "From the fake.");
  assert.equal(streamed.stop_reason, "end_turn");
  const openai = new OpenAI({ baseURL: `${vendor.origin}/v1`, apiKey: "k", maxRetries: 0 });
  const stream = await openai.responses.create({ model: "gpt-test", input: "hi", stream: true });
  let text = "";
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
  }
  assert.equal(text, "From the fake too.");
  const plain = await openai.responses.create({ model: "gpt-test", input: "hi" });
  assert.equal(plain.output_text, "From the fake too.");
});

Deno.test("fake vendor: holdLast streams all but the last token until released", async () => {
  const release = Promise.withResolvers<void>();
  await using vendor = startFakeVendor({
    answer: { text: "one two three", holdLast: release.promise },
  });
  const response = await post(`${vendor.origin}/v1/messages`, ask("x", { stream: true }));
  await using reader = new SseReader(response);
  const pieces = tokenPieces("one two three");
  const texts: string[] = [];
  for (let i = 0; i < pieces.length - 1; i++) {
    texts.push((await reader.until("content_block_delta")).data.delta.text);
  }
  assert.equal(texts.join(""), pieces.slice(0, -1).join(""));
  assert.ok(Number.isNaN(vendor.requests[0].repliedAt), "the last token is held");
  release.resolve();
  const rest = await reader.rest();
  assert.equal(rest.at(-1)!.event, "message_stop");
  assert.ok(Number.isFinite(vendor.requests[0].repliedAt));
});
