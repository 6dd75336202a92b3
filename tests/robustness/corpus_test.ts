/**
 * The bad-input corpus (issue 9 §1): malformed and odd requests on all four endpoints, each
 * with the status it must get and why. Refusals are 4xx in the endpoint's JSON envelope with no
 * internals; odd-but-valid inputs a tolerant gateway accepts answer 200 with a council reply.
 * After every case a good request must still be answered, and no record is logged at error.
 *
 * The server is the real one (`startServer`, real council and protocols) with a token, over
 * in-process agents; `maxBodyBytes` is 12 MB so 10 MB strings fit and 13 MB bodies do not.
 */
import assert from "node:assert/strict";
import { resetSync } from "@logtape/logtape";
import { setupLogging } from "../../src/base/log.ts";
import {
  assertErrorEnvelope,
  assertNoStackTrace,
  bytes,
  configWith,
  type Envelope,
  gateway,
  goodBody,
  instantAgent,
  rawRequest,
  TOKEN,
} from "../support/real_server.ts";

type Endpoint = "messages" | "responses" | "count_tokens" | "models";

const PATH: Record<Endpoint, string> = {
  messages: "/v1/messages",
  responses: "/v1/responses",
  count_tokens: "/v1/messages/count_tokens",
  models: "/v1/models",
};

/** What a case must get. `answer`: 200 with a council reply; `count`: 200 `{input_tokens}`. */
type Expect = 400 | 401 | 404 | 413 | 415 | "answer" | "count" | "models";

interface Case {
  name: string;
  endpoint: Endpoint;
  expect: Expect;
  /** Why this is the right answer (the corpus's documentation). */
  why: string;
  /** The body: raw text or bytes, or `{ json }` to serialise. Default: a valid body. */
  body?: string | Uint8Array<ArrayBuffer> | { json: unknown };
  /** Request headers, replacing the defaults (JSON content type and the right bearer token). */
  headers?: Record<string, string>;
  /** Sent as written over a raw connection (for repeated headers and non-ASCII bytes). */
  raw?: string[];
  method?: string;
  path?: string;
}

const MB = 1024 * 1024;
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_AUTH = { "content-type": "application/json", ...AUTH };

/** A valid Messages body with `patch` applied (a value of `undefined` removes the key). */
function msg(patch: Record<string, unknown> = {}): { json: unknown } {
  return { json: withPatch(goodBody("messages"), patch) };
}
/** A valid Responses body with `patch` applied. */
function resp(patch: Record<string, unknown> = {}): { json: unknown } {
  return { json: withPatch(goodBody("responses"), patch) };
}
function withPatch(base: Record<string, unknown>, patch: Record<string, unknown>) {
  const out: Record<string, unknown> = { ...base, ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete out[k];
  return out;
}
/** A Responses body with these input items. */
const items = (...input: unknown[]) => resp({ input });

const nested = (depth: number, leaf = "1") => "[".repeat(depth) + leaf + "]".repeat(depth);
const nestedObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
const TEN_MB = "x".repeat(10 * MB);

const INVALID_JSON = [
  "{",
  '{"model": }',
  "{'model': 'x'}",
  '{"a":1,}',
  "NaN",
  "undefined",
  "\u0000",
];
const NOT_OBJECTS = ["[]", '"a string"', "42", "null", "true"];

/** Builders: a 400 refusal, an accepted odd-but-valid request, a count_tokens case. */
const bad = (endpoint: Endpoint, name: string, body: Case["body"], why: string): Case => ({
  endpoint,
  name,
  body,
  expect: 400,
  why,
});
const odd = (endpoint: Endpoint, name: string, body: Case["body"], why: string): Case => ({
  endpoint,
  name,
  body,
  expect: "answer",
  why,
});
const count = (
  name: string,
  body: Case["body"],
  why = "CONTRACT.md §4.3: never an error",
): Case => ({
  endpoint: "count_tokens",
  name,
  body,
  expect: "count",
  why,
});
/** A request with these headers only (no defaults). */
const headed = (
  endpoint: Endpoint,
  name: string,
  headers: Record<string, string>,
  expect: Expect,
  why: string,
): Case => ({ endpoint, name, headers, expect, why });
/** Sent over a raw connection with these extra head lines. */
const rawCase = (endpoint: Endpoint, name: string, raw: string[], expect: Expect, why: string) => ({
  endpoint,
  name,
  raw,
  expect,
  why,
});

const typed = (type: string) => ({ "content-type": type, ...AUTH });
const CT = { "content-type": "application/json" };
const userSays = (content: unknown) => msg({ messages: [{ role: "user", content }] });
const toolLoop = (input: unknown) =>
  msg({
    messages: [
      { role: "assistant", content: [{ type: "tool_use", id: "t", name: "Read", input }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] },
    ],
  });

const CASES: Case[] = [
  // ---- bodies that are not JSON objects ----------------------------------------------------
  ...INVALID_JSON.flatMap((text) => [
    bad("messages", `invalid JSON ${JSON.stringify(text)}`, text, "not JSON"),
    bad("responses", `invalid JSON ${JSON.stringify(text)}`, text, "not JSON"),
  ]),
  ...NOT_OBJECTS.map((text, i) =>
    bad(i % 2 ? "responses" : "messages", `non-object body ${text}`, text, "must be an object")
  ),
  bad("messages", "empty body", "", "nothing to parse"),
  bad("responses", "whitespace body", " \n ", "nothing to parse"),
  bad(
    "messages",
    "invalid UTF-8 in a string",
    bytes(
      '{"model":"m","messages":[{"role":"user","content":"',
      new Uint8Array([0xc3, 0x28]),
      '"}]}',
    ),
    "bodies are UTF-8 JSON; no guessing",
  ),
  bad(
    "responses",
    "invalid UTF-8 (lone continuation byte)",
    bytes('{"model":"m","input":"', new Uint8Array([0x80]), '"}'),
    "bodies are UTF-8 JSON",
  ),
  bad(
    "messages",
    "raw NUL byte outside a string",
    bytes('{"model":"m",', new Uint8Array([0]), '"messages":[]}'),
    "not JSON",
  ),
  bad(
    "responses",
    "raw control character in a string",
    '{"model":"m","input":"a\u0001b"}',
    "JSON escapes them",
  ),
  bad("messages", "1,000-deep array as the body", nested(1000), "not an object"),
  bad(
    "responses",
    "100,000-deep array as the body",
    nested(100_000),
    "not an object; no stack overflow",
  ),
  count("invalid JSON", "{"),
  count("non-object body", "[1,2]"),
  count("invalid UTF-8", new Uint8Array([0xff, 0xfe])),

  // ---- Messages: missing fields and wrong types, field by field ------------------------------
  bad("messages", "model missing", msg({ model: undefined }), "required"),
  bad("messages", "model: 42", msg({ model: 42 }), "a string"),
  bad("messages", "model: null", msg({ model: null }), "a string"),
  bad("messages", 'model: ""', msg({ model: "" }), "non-empty"),
  bad("messages", "model: 10 MB", msg({ model: TEN_MB }), "at most 256 characters: echoed, logged"),
  bad("messages", "messages missing", msg({ messages: undefined }), "required"),
  bad("messages", 'messages: "hi"', msg({ messages: "hi" }), "a list"),
  bad("messages", "messages: {}", msg({ messages: {} }), "a list"),
  bad("messages", "messages: [] (empty history)", msg({ messages: [] }), "nothing to answer"),
  bad("messages", 'messages: ["hi"]', msg({ messages: ["hi"] }), "messages are objects"),
  bad("messages", "role: robot", msg({ messages: [{ role: "robot", content: "hi" }] }), "enum"),
  bad("messages", "role: 1", msg({ messages: [{ role: 1, content: "hi" }] }), "a string"),
  bad("messages", "role missing", msg({ messages: [{ content: "hi" }] }), "required"),
  bad("messages", "content: 42", userSays(42), "a string or blocks"),
  bad("messages", "content: null", userSays(null), "a string or blocks"),
  bad("messages", "content missing", msg({ messages: [{ role: "user" }] }), "required"),
  bad("messages", "block without type", userSays([{ text: "hi" }]), "blocks are typed"),
  bad("messages", "block type: 5", userSays([{ type: 5, text: "hi" }]), "type is a string"),
  bad("messages", "block: a bare string", userSays(["hi"]), "blocks are objects"),
  bad("messages", "text: 5", userSays([{ type: "text", text: 5 }]), "a string"),
  bad("messages", "text missing", userSays([{ type: "text" }]), "required"),
  bad("messages", "tool_use without id", userSays([{ type: "tool_use", name: "R" }]), "required"),
  bad("messages", "tool_use name: 5", userSays([{ type: "tool_use", id: "t", name: 5 }]), "string"),
  bad("messages", "tool_use_id: 5", userSays([{ type: "tool_result", tool_use_id: 5 }]), "string"),
  bad(
    "messages",
    'is_error: "yes"',
    userSays([{ type: "tool_result", tool_use_id: "t", is_error: "yes" }]),
    "a boolean",
  ),
  bad(
    "messages",
    "tool_result content: 5",
    userSays([{ type: "tool_result", tool_use_id: "t", content: 5 }]),
    "a string or blocks",
  ),
  bad("messages", "thinking without thinking", userSays([{ type: "thinking" }]), "required"),
  bad("messages", "system: 42", msg({ system: 42 }), "a string or text blocks"),
  bad("messages", "system block without text", msg({ system: [{ type: "text" }] }), "required"),
  bad("messages", "tools: {}", msg({ tools: {} }), "a list"),
  bad("messages", 'tools[0].name: ""', msg({ tools: [{ name: "" }] }), "non-empty"),
  bad(
    "messages",
    "input_schema: a string",
    msg({ tools: [{ name: "t", input_schema: "x" }] }),
    "object",
  ),
  bad("messages", 'stream: "true"', msg({ stream: "true" }), "a boolean"),
  bad(
    "messages",
    "stream with a bad body",
    msg({ stream: true, messages: 1 }),
    "JSON error, no SSE",
  ),
  bad(
    "messages",
    "1,000-deep nesting as content",
    userSays(JSON.parse(nested(1000))),
    "not blocks",
  ),
  bad(
    "messages",
    "duplicate keys, the last one wrong",
    '{"model":"claude-opus-4-8","model":5,"messages":[{"role":"user","content":"hi"}]}',
    "JSON.parse keeps the last duplicate, as most parsers do; it is checked like any value",
  ),

  // ---- Messages: odd but valid — a tolerant gateway answers, and the council runs ------------
  odd(
    "messages",
    "duplicate keys, the last one right",
    '{"model":5,"model":"claude-opus-4-8","messages":[{"role":"user","content":"dup"}]}',
    "the last duplicate wins and is valid",
  ),
  odd(
    "messages",
    "unknown block type",
    userSays([{ type: "server_tool_use", id: "s" }, { type: "text", text: "unknown" }]),
    "new block kinds (server tools, search results) are ignored, not fatal",
  ),
  odd(
    "messages",
    "tool_result without a preceding tool_use",
    userSays([{ type: "tool_result", tool_use_id: "toolu_nowhere", content: "42" }]),
    "hosts compact histories and drop old tool_use blocks: runs as a continuation",
  ),
  odd(
    "messages",
    "history without a user message",
    msg({ messages: [{ role: "assistant", content: "I said this" }] }),
    "valid to the schema; the council runs on an empty ask",
  ),
  odd("messages", "empty content list", userSays([]), "like an empty string"),
  odd(
    "messages",
    "unknown top-level fields, and wrong types in fields we do not read",
    msg({ max_tokens: "lots", temperature: "hot", metadata: 5, service_tier: [] }),
    "the gateway reads model, messages, system, tools and stream only",
  ),
  odd("messages", "NUL characters in text", userSays("a\u0000b\u0000"), "escaped NUL is text"),
  odd("messages", "10 MB of text", userSays(TEN_MB), "a large prompt (under maxBodyBytes)"),
  odd(
    "messages",
    "1,000-deep tool_use input",
    toolLoop(JSON.parse(nestedObject(1000))),
    "any JSON",
  ),
  odd(
    "messages",
    "byte-order mark before the JSON",
    "\uFEFF" + JSON.stringify(goodBody("messages", "bom")),
    "the UTF-8 decoder drops a leading BOM",
  ),

  // ---- Responses: missing fields and wrong types ----------------------------------------------
  bad("responses", "model missing", resp({ model: undefined }), "required"),
  bad("responses", "model: []", resp({ model: [] }), "a string"),
  bad("responses", "model: 10 MB", resp({ model: TEN_MB }), "at most 256 characters"),
  bad("responses", "input missing", resp({ input: undefined }), "required"),
  bad("responses", "input: 42", resp({ input: 42 }), "a string or items"),
  bad("responses", "input: {}", resp({ input: {} }), "a string or items"),
  bad("responses", "input: [] (empty history)", resp({ input: [] }), "nothing to answer"),
  bad("responses", "input: [42]", items(42), "items are objects"),
  bad("responses", "item type: 5", items({ type: 5 }), "type is a string"),
  bad("responses", "item without type or role", items({ content: "hi" }), "untyped"),
  bad("responses", "role: robot", items({ role: "robot", content: "hi" }), "known roles only"),
  bad("responses", "message content: 42", items({ role: "user", content: 42 }), "string or parts"),
  bad(
    "responses",
    "part text: 5",
    items({ role: "user", content: [{ type: "input_text", text: 5 }] }),
    "a string",
  ),
  bad("responses", "function_call without call_id", items({ type: "function_call" }), "required"),
  bad(
    "responses",
    "function_call arguments: {}",
    items({ type: "function_call", call_id: "c", name: "f", arguments: {} }),
    "the Responses API sends arguments as a JSON string",
  ),
  bad(
    "responses",
    "function_call_output output: 42",
    items({ type: "function_call_output", call_id: "c", output: 42 }),
    "a string or parts",
  ),
  bad(
    "responses",
    "reasoning summary: a string",
    items({ type: "reasoning", summary: "x" }),
    "list",
  ),
  bad("responses", "instructions: 42", resp({ instructions: 42 }), "a string"),
  bad("responses", 'tools: "x"', resp({ tools: "x" }), "a list"),
  bad("responses", "stream: 1", resp({ stream: 1 }), "a boolean"),

  // ---- Responses: odd but valid ----------------------------------------------------------------
  odd(
    "responses",
    "unknown item type",
    items({ type: "web_search_call", id: "ws" }, { role: "user", content: "unknown" }),
    "item kinds we do not interpret are ignored",
  ),
  odd(
    "responses",
    "function_call_output without a function_call",
    items({ type: "function_call_output", call_id: "nowhere", output: "42" }),
    "compacted histories: runs as a continuation",
  ),
  odd("responses", 'input: ""', resp({ input: "" }), "one empty message; the council runs"),
  odd(
    "responses",
    "unknown part type and unknown fields",
    resp({
      input: [{
        role: "user",
        content: [{ type: "input_audio" }, { type: "input_text", text: "a" }],
      }],
      temperature: "hot",
      reasoning: 5,
    }),
    "tolerated",
  ),
  odd("responses", "10 MB of text with NUL", resp({ input: TEN_MB + "\u0000" }), "a large prompt"),

  // ---- count_tokens never fails on content -------------------------------------------------------
  count("messages: 5", msg({ messages: 5 })),
  count("10 MB of text", userSays(TEN_MB)),
  count(
    "1,000-deep tool schema",
    msg({ tools: [{ name: "t", input_schema: JSON.parse(nestedObject(1000)) }] }),
  ),

  // ---- sizes (maxBodyBytes is 12 MB here) --------------------------------------------------------
  {
    ...bad("messages", "13 MB body", userSays("y".repeat(13 * MB)), "over maxBodyBytes"),
    expect: 413,
  },
  {
    ...bad("responses", "13 MB body", resp({ input: "y".repeat(13 * MB) }), "over maxBodyBytes"),
    expect: 413,
  },
  { ...count("13 MB body", userSays("y".repeat(13 * MB)), "over maxBodyBytes"), expect: 413 },
  {
    ...rawCase(
      "messages",
      "content-length of 1 GB",
      [`Content-Length: ${1024 * MB}`],
      413,
      "refused unread",
    ),
    body: "{}",
  },

  // ---- content types (page-shaped requests: browser_test.ts) -----------------------------------
  headed("messages", "text/plain", typed("text/plain"), 415, "a page can send it unpreflighted"),
  headed("responses", "form", typed("application/x-www-form-urlencoded"), 415, "pages; curl -d"),
  headed("count_tokens", "multipart", typed("multipart/form-data; boundary=b"), 415, "pages"),
  headed("messages", "application/xml", typed("application/xml"), 415, "JSON only"),
  headed("messages", "no content type, no Origin", AUTH, "answer", "scripts; pages send Origin"),
  headed(
    "responses",
    "JSON with charset",
    typed("application/json; charset=utf-8"),
    "answer",
    "ok",
  ),

  // ---- auth header variants (a token is configured) ----------------------------------------------
  headed("messages", "no credentials", CT, 401, "CONTRACT.md §5.4"),
  headed("models", "no credentials", {}, 401, "every route needs the token"),
  headed("count_tokens", "no credentials", CT, 401, "every route needs the token"),
  headed(
    "messages",
    "lower-case bearer",
    { ...CT, authorization: `bearer ${TOKEN}` },
    "answer",
    "auth schemes are case-insensitive (RFC 9110 §11.1)",
  ),
  headed("models", "BEARER", { authorization: `BEARER ${TOKEN}` }, "models", "case-insensitive"),
  headed(
    "responses",
    "extra spaces around the token",
    { ...CT, authorization: `Bearer    ${TOKEN}   ` },
    "answer",
    "the whitespace is not part of the token",
  ),
  rawCase(
    "messages",
    "two Authorization headers, both right",
    [`Authorization: Bearer ${TOKEN}`, `Authorization: Bearer ${TOKEN}`],
    401,
    "repeated credentials arrive joined and are ambiguous: refused",
  ),
  rawCase(
    "messages",
    "two Authorization headers, wrong then right",
    ["Authorization: Bearer wrong", `Authorization: Bearer ${TOKEN}`],
    401,
    "ambiguous: refused",
  ),
  rawCase(
    "models",
    "two x-api-key headers",
    [`x-api-key: ${TOKEN}`, `x-api-key: ${TOKEN}`],
    401,
    "ambiguous",
  ),
  headed(
    "messages",
    "wrong bearer, right x-api-key",
    { ...CT, authorization: "Bearer sk-ant-provider-key", "x-api-key": TOKEN },
    "answer",
    "either header may carry the token (the other may be a provider key)",
  ),
  headed("messages", "empty bearer", { ...CT, authorization: "Bearer " }, 401, "no token"),
  headed("models", "bare Bearer", { authorization: "Bearer" }, 401, "no token"),
  headed("responses", "empty x-api-key", { ...CT, "x-api-key": "" }, 401, "no token"),
  headed(
    "messages",
    "right prefix of the token",
    { ...CT, authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    401,
    "the whole token or nothing",
  ),
  headed("models", "short prefix of the token", { "x-api-key": TOKEN.slice(0, 8) }, 401, "whole"),
  headed("responses", "token plus a character", { ...CT, "x-api-key": `${TOKEN}x` }, 401, "exact"),
  headed(
    "models",
    "token in another case",
    { authorization: `Bearer ${TOKEN.toUpperCase()}` },
    401,
    "exact",
  ),
  headed("models", "token without a scheme", { authorization: TOKEN }, 401, "Bearer only"),
  headed(
    "models",
    "Basic scheme",
    { authorization: `Basic ${btoa(`u:${TOKEN}`)}` },
    401,
    "Bearer only",
  ),
  {
    ...headed("models", "token in the query", {}, 401, "headers only"),
    path: `/v1/models?key=${TOKEN}`,
  },
  rawCase(
    "models",
    "non-ASCII bytes in Authorization",
    [`Authorization: Bearer ${TOKEN}\u00ff`],
    401,
    "not it",
  ),

  // ---- routes ----------------------------------------------------------------------------------
  { ...headed("messages", "GET on a POST endpoint", AUTH, 404, "CONTRACT.md §7"), method: "GET" },
  {
    ...headed("models", "POST on GET /v1/models", { ...CT, ...AUTH }, 404, "CONTRACT.md §7"),
    method: "POST",
  },
  {
    ...headed("messages", "unknown path", { ...CT, ...AUTH }, 404, "CONTRACT.md §7"),
    path: "/v1/complete",
  },
];

function envelopeOf(c: Case): Envelope {
  // Every refusal is in its path's protocol's envelope (CONTRACT.md §2.3), 401s and 404s too.
  return c.endpoint === "responses" ? "openai" : "anthropic";
}

function bodyBytes(c: Case): Uint8Array<ArrayBuffer> | undefined {
  if (c.method === "GET" || (c.endpoint === "models" && c.method !== "POST")) return undefined;
  const body = c.body ?? (c.endpoint === "responses" ? resp() : msg());
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  return new TextEncoder().encode(JSON.stringify(body.json));
}

async function send(port: number, origin: string, c: Case) {
  const method = c.method ?? (c.endpoint === "models" ? "GET" : "POST");
  const path = c.path ?? PATH[c.endpoint];
  const body = bodyBytes(c);
  if (c.raw) {
    const head = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...c.raw];
    if (body && !c.raw.some((l) => /^content-type:/i.test(l))) {
      head.push("Content-Type: application/json");
    }
    if (!c.raw.some((l) => /^(authorization|x-api-key):/i.test(l))) {
      head.push(`Authorization: Bearer ${TOKEN}`);
    }
    const res = await rawRequest(port, head, body);
    return { status: res.status, text: res.body };
  }
  const res = await fetch(origin + path, { method, headers: c.headers ?? JSON_AUTH, body });
  return { status: res.status, text: await res.text() };
}

function checkReply(c: Case, status: number, text: string): void {
  const what = `${c.endpoint} — ${c.name} (${c.why})`;
  assert.ok(status < 500, `${what}: ${status} ${text.slice(0, 300)}`);
  assertNoStackTrace(text, what);
  assert.ok(!text.includes(TOKEN.slice(0, 8)), `${what}: the reply echoes the token`);
  switch (c.expect) {
    case "answer": {
      assert.equal(status, 200, `${what}: ${text.slice(0, 300)}`);
      const json = JSON.parse(text);
      if (c.endpoint === "responses") {
        assert.equal(json.object, "response", what);
        assert.equal(json.status, "completed", what);
        assert.match(json.output[0].content[0].text, /^answer from /, what);
      } else {
        assert.equal(json.type, "message", what);
        assert.match(json.content[0].text, /^answer from /, `${what}: ${text.slice(0, 500)}`);
      }
      return;
    }
    case "count": {
      assert.equal(status, 200, `${what}: ${text.slice(0, 300)}`);
      const json = JSON.parse(text);
      assert.deepEqual(Object.keys(json), ["input_tokens"], what);
      assert.ok(Number.isInteger(json.input_tokens) && json.input_tokens >= 0, what);
      return;
    }
    case "models":
      assert.equal(status, 200, what);
      assert.ok(Array.isArray(JSON.parse(text).data), what);
      return;
    default: {
      assert.equal(status, c.expect, `${what}: ${text.slice(0, 300)}`);
      const error = assertErrorEnvelope(text, envelopeOf(c), what);
      if (c.expect === 401) assert.equal(error.message, "unauthorized", what);
      if (c.expect === 400) assert.equal(error.type, "invalid_request_error", what);
    }
  }
}

Deno.test("corpus: at least 60 cases over all four endpoints and every category", () => {
  assert.ok(CASES.length >= 60, `${CASES.length} cases`);
  for (const endpoint of Object.keys(PATH)) {
    assert.ok(CASES.some((c) => c.endpoint === endpoint), endpoint);
  }
  for (const expect of [400, 401, 404, 413, 415, "answer", "count"]) {
    assert.ok(CASES.some((c) => c.expect === expect), String(expect));
  }
});

Deno.test("corpus: every malformed request gets its status and envelope; the server keeps serving", async () => {
  const records: string[] = [];
  setupLogging({
    level: "debug",
    json: true,
    secrets: [TOKEN],
    write: (line) => records.push(line),
  });
  const agent = instantAgent();
  try {
    await using server = gateway(
      configWith({ token: TOKEN, maxBodyBytes: 12 * MB, fanOutPolicy: "always" }),
      { runAgent: agent },
    );
    for (const [i, c] of CASES.entries()) {
      const reply = await send(server.port, server.origin, c);
      checkReply(c, reply.status, reply.text);
      // A fresh conversation each time, so the session turn cap never answers instead.
      const good: Case = {
        name: "good request after it",
        endpoint: "messages",
        body: { json: goodBody("messages", `control ${i}`) },
        expect: "answer",
        why: c.name,
      };
      const after = await send(server.port, server.origin, good);
      checkReply(good, after.status, after.text);
    }
    // Refusals ran nothing: only "answer" cases (and the good requests) reached the council.
    assert.ok(agent.calls > 0);
  } finally {
    resetSync();
  }
  const errors = records.map((line) => JSON.parse(line)).filter((r) => r.level === "error");
  assert.deepEqual(errors, [], "nothing logged at error level");
  assert.ok(!records.some((line) => line.includes(TOKEN)), "the token is never logged");
});
