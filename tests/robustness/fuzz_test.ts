/**
 * Property-based fuzzing (issue 9 §1) of both protocols' request schemas against the real server
 * and council (in-process agents): arbitrary JSON, arbitrary bytes, schema-shaped bodies whose
 * fields may each be replaced by anything, and random mutations of valid bodies. No input may
 * yield a 5xx, a reply that is not the endpoint's envelope, a broken stream, an error-level log
 * record, or a server that stops answering.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { resetSync } from "@logtape/logtape";
import { setupLogging } from "../../src/base/log.ts";
import {
  assertErrorEnvelope,
  assertNoStackTrace,
  configWith,
  type Gateway,
  gateway,
  goodBody,
  instantAgent,
} from "../support/real_server.ts";

type Endpoint = "messages" | "responses" | "count_tokens";
const PATH: Record<Endpoint, string> = {
  messages: "/v1/messages",
  responses: "/v1/responses",
  count_tokens: "/v1/messages/count_tokens",
};
/** Runs per property; `FUZZ_RUNS=3000 deno test -A tests/robustness/fuzz_test.ts` digs deeper. */
const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 300);

// ---- arbitraries ------------------------------------------------------------------------------

const anyJson = fc.jsonValue({ maxDepth: 4 });
/** Mostly `arb`, now and then any JSON value at all (most likely a wrong type for the field). */
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 20, arbitrary: arb }, { weight: 1, arbitrary: anyJson });
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", "\u0000", "\uFEFF", "\ud800", "Working directory: /tmp", "<system-reminder>"),
);
/** An object of these fields; those named in `optional` come and go. */
const fields = <T extends Record<string, fc.Arbitrary<unknown>>>(
  shape: T,
  optional: (keyof T & string)[] = [],
) =>
  fc.record(shape, {
    requiredKeys: Object.keys(shape).filter((k) => !optional.includes(k)) as (keyof T & string)[],
  });

const textBlock = fields({ type: fc.constant("text"), text: maybe(text) });
const messageBlock = fc.oneof(
  textBlock,
  fields({
    type: fc.constant("image"),
    source: maybe(fields({ media_type: text }, ["media_type"])),
  }, [
    "source",
  ]),
  fields({ type: fc.constant("document"), title: maybe(fc.option(text)) }, ["title"]),
  fields({ type: fc.constant("tool_use"), id: maybe(text), name: maybe(text), input: anyJson }),
  fields({
    type: fc.constant("tool_result"),
    tool_use_id: maybe(text),
    content: maybe(fc.oneof(text, fc.array(textBlock, { maxLength: 3 }))),
    is_error: maybe(fc.boolean()),
  }, ["content", "is_error"]),
  fields({
    type: fc.constant("thinking"),
    thinking: maybe(text),
    signature: maybe(fc.constantFrom("council-progress", "sig", "")),
  }, ["signature"]),
  fields({ type: fc.constant("redacted_thinking"), data: maybe(text) }),
  fields({ type: text, text: maybe(text) }, ["text"]),
);
const message = fields({
  role: maybe(fc.constantFrom("user", "assistant", "system")),
  content: maybe(fc.oneof(text, fc.array(maybe(messageBlock), { maxLength: 4 }))),
});
const tool = fields({
  name: maybe(text),
  type: maybe(fc.constantFrom("custom", "web_search_20250305", "bash_20250124")),
  description: maybe(text),
  input_schema: maybe(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 })),
}, ["type", "description", "input_schema"]);
const model = maybe(fc.constantFrom("claude-opus-4-8", "claude-haiku-4-5", "gpt-5.5", "x"));
const messagesBody = fields({
  model,
  messages: maybe(fc.array(message, { minLength: 1, maxLength: 4 })),
  system: maybe(fc.oneof(text, fc.array(textBlock, { maxLength: 2 }))),
  tools: maybe(fc.array(tool, { maxLength: 2 })),
  stream: maybe(fc.boolean()),
  max_tokens: maybe(fc.nat()),
}, ["system", "tools", "stream", "max_tokens"]);

const part = fc.oneof(
  fields({ type: fc.constantFrom("input_text", "output_text", "text"), text: maybe(text) }),
  fields({ type: fc.constant("refusal"), refusal: maybe(text) }),
  fields({ type: fc.constantFrom("input_image", "input_file"), filename: maybe(text) }, [
    "filename",
  ]),
  fields({ type: text }),
);
const parts = maybe(fc.oneof(text, fc.array(maybe(part), { maxLength: 3 })));
const item = fc.oneof(
  fields({
    type: maybe(fc.constant("message")),
    role: maybe(fc.constantFrom("user", "assistant", "system", "developer")),
    content: parts,
  }, ["type"]),
  fields({
    type: fc.constantFrom("function_call", "custom_tool_call"),
    call_id: maybe(text),
    name: maybe(text),
    arguments: maybe(text),
    input: maybe(text),
  }),
  fields({
    type: fc.constantFrom("function_call_output", "custom_tool_call_output"),
    call_id: maybe(text),
    output: parts,
  }),
  fields({
    type: fc.constant("reasoning"),
    id: maybe(fc.constantFrom("rs_council_progress", "rs_1")),
    summary: maybe(fc.array(fields({ text: maybe(text) }), { maxLength: 2 })),
    encrypted_content: maybe(fc.option(text)),
  }, ["id", "summary", "encrypted_content"]),
  fields({ type: text }),
);
const responsesBody = fields({
  model,
  instructions: maybe(fc.option(text)),
  input: maybe(fc.oneof(text, fc.array(maybe(item), { minLength: 1, maxLength: 4 }))),
  tools: maybe(fc.option(fc.array(anyJson, { maxLength: 2 }))),
  stream: maybe(fc.option(fc.boolean())),
}, ["instructions", "tools", "stream"]);

/** Valid bodies to mutate: plain asks, tool loops, progress blocks, streams. */
const VALID: Record<"messages" | "responses", unknown[]> = {
  messages: [
    goodBody("messages"),
    {
      model: "claude-opus-4-8",
      stream: true,
      system: [{ type: "text", text: "You are Claude Code." }],
      tools: [{ name: "Read", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "read notes.txt" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "council progress", signature: "sig" },
            { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "notes.txt" } },
          ],
        },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{ type: "text", text: "hi" }],
          }],
        },
      ],
    },
  ],
  responses: [
    goodBody("responses"),
    {
      model: "gpt-5.5",
      stream: true,
      instructions: "You are Codex.",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
        { type: "reasoning", id: "rs_1", summary: [{ text: "thinking" }] },
        { type: "function_call", call_id: "c1", name: "shell", arguments: '{"cmd":"ls"}' },
        { type: "function_call_output", call_id: "c1", output: "a.txt" },
      ],
      tools: [{ type: "function", name: "shell" }],
    },
  ],
};

type Path = (string | number)[];

/** Every path into a JSON value (the root is `[]`). */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  }
  return out;
}

type Mutation = "replace" | "delete" | "retype" | "wrap" | "stringify" | "duplicate";

/** Applies one mutation at `path` of a deep copy of `body`. */
function mutate(body: unknown, path: Path, how: Mutation, value: unknown): unknown {
  const root = structuredClone(body);
  if (path.length === 0) return how === "stringify" ? JSON.stringify(root) : value;
  type Node = Record<string | number, unknown>;
  const parent = path.slice(0, -1).reduce<Node>((v, k) => v[k] as Node, root as Node);
  const key = path.at(-1)!;
  const current = parent[key];
  switch (how) {
    case "replace":
      parent[key] = value;
      break;
    case "delete":
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      break;
    case "retype":
      if (current && typeof current === "object" && !Array.isArray(current)) {
        (current as Node).type = typeof value === "string" ? value : "mystery";
      } else parent[key] = value;
      break;
    case "wrap":
      parent[key] = [current];
      break;
    case "stringify":
      parent[key] = JSON.stringify(current) ?? "null";
      break;
    case "duplicate":
      if (Array.isArray(parent)) parent.splice(Number(key), 0, structuredClone(current));
      else parent[key] = [current, current];
      break;
  }
  return root;
}

// ---- checking a reply ------------------------------------------------------------------------

async function post(server: Gateway, endpoint: Endpoint, body: BodyInit): Promise<void> {
  const res = await fetch(`${server.origin}${PATH[endpoint]}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  const what = `${endpoint} ${res.status}: ${text.slice(0, 300)}`;
  assert.ok(res.status < 500, what);
  assertNoStackTrace(text, what);
  if (endpoint === "count_tokens") {
    assert.equal(res.status, 200, what);
    assert.ok(Number.isInteger(JSON.parse(text).input_tokens), what);
    return;
  }
  if (res.status !== 200) {
    assert.equal(res.status, 400, what);
    assertErrorEnvelope(text, endpoint === "responses" ? "openai" : "anthropic", what);
    return;
  }
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    const end = endpoint === "messages"
      ? /event: message_stop\n/
      : /event: response\.(completed|failed)\n/;
    assert.match(
      text,
      end,
      `${endpoint}: the stream ended without its closing event: ${text.slice(-300)}`,
    );
    assert.doesNotMatch(text, /event: error\n/, what);
    return;
  }
  const json = JSON.parse(text);
  if (endpoint === "messages") assert.equal(json.type, "message", what);
  else assert.ok(json.object === "response" && ["completed", "failed"].includes(json.status), what);
}

/** Runs `fn` against one server with error-level logging captured; nothing may be logged. */
async function fuzzing(fn: (server: Gateway) => Promise<void>): Promise<void> {
  const errors: string[] = [];
  setupLogging({
    level: "warn",
    json: false,
    write: (line) => {
      if (/ ERROR /.test(line)) errors.push(line);
    },
  });
  try {
    await using server = gateway(configWith({ fanOutPolicy: "auto" }), {
      runAgent: instantAgent(),
    });
    await fn(server);
    // Still serving.
    await post(server, "messages", JSON.stringify(goodBody("messages", "still there?")));
  } finally {
    resetSync();
  }
  assert.deepEqual(errors, [], "error-level log records");
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const endpoints = fc.constantFrom<Endpoint>("messages", "responses", "count_tokens");

Deno.test("fuzz: arbitrary JSON values and arbitrary bytes", async () => {
  await fuzzing(async (server) => {
    await fc.assert(
      fc.asyncProperty(endpoints, fc.jsonValue({ maxDepth: 6 }), async (endpoint, value) => {
        await post(server, endpoint, encode(value));
      }),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(endpoints, fc.uint8Array({ maxLength: 200 }), async (endpoint, data) => {
        await post(server, endpoint, data);
      }),
      { numRuns: RUNS },
    );
  });
});

Deno.test("fuzz: schema-shaped bodies with any field of any type", async () => {
  await fuzzing(async (server) => {
    await fc.assert(
      fc.asyncProperty(messagesBody, async (body) => {
        await post(server, "messages", encode(body));
        await post(server, "count_tokens", encode(body));
      }),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(responsesBody, async (body) => {
        await post(server, "responses", encode(body));
      }),
      { numRuns: RUNS },
    );
  });
});

Deno.test("fuzz: mutations of valid bodies", async () => {
  const mutation = (protocol: "messages" | "responses") =>
    fc.constantFrom(...VALID[protocol]).chain((body) =>
      fc.tuple(
        fc.constant(body),
        fc.constantFrom(...pathsOf(body)),
        fc.constantFrom<Mutation>("replace", "delete", "retype", "wrap", "stringify", "duplicate"),
        fc.oneof(anyJson, text),
      )
    );
  await fuzzing(async (server) => {
    for (const protocol of ["messages", "responses"] as const) {
      await fc.assert(
        fc.asyncProperty(mutation(protocol), async ([body, path, how, value]) => {
          await post(server, protocol, encode(mutate(body, path, how, value)));
        }),
        { numRuns: RUNS },
      );
    }
  });
});
