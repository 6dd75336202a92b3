/**
 * Helpers for the robustness suite: a real server (`startServer`, port 0) over the real council
 * with an in-process agent or the fake CLIs, a raw HTTP/1.1 client for requests `fetch` cannot
 * send (a foreign Host, repeated headers, bytes that are not UTF-8), and envelope checks.
 */
import assert from "node:assert/strict";
import type { AgentConfig, Config, ConfigFile } from "../../src/config/mod.ts";
import { configOf } from "./test_config.ts";
import type { AgentPrompt, AgentResult, RunAgent } from "../../src/agents/types.ts";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/wiring.ts";

export const TOKEN = "gw-Token-7f3a9c1e5b";

/** Two in-process agents: cheap, yet the council (judge, children, synthesizer) really runs. */
export const TWO_AGENTS = [
  { runner: "claude", model: "opus" },
  { runner: "codex", model: "gpt-5.5" },
] as const;

/** A Config from config-file keys (port 0; agents default to `TWO_AGENTS`). */
export function configWith(file: ConfigFile = {}, agents?: AgentConfig[]): Config {
  return configOf({ port: 0, defaultAgents: TWO_AGENTS.map((a) => ({ ...a })), ...file }, agents);
}

/** An agent that answers at once in-process, naming itself; counts its calls. */
export function instantAgent(): RunAgent & { calls: number } {
  const run = (
    agent: AgentConfig,
    _prompt: AgentPrompt,
    options: { role: AgentResult["role"] },
  ) => {
    run.calls++;
    return Promise.resolve<AgentResult>({
      agent: agent.name,
      model: agent.model,
      role: options.role,
      ok: true,
      text: `answer from ${agent.name}`,
      exitCode: 0,
      timedOut: false,
      aborted: false,
      durationMs: 1,
      usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.001, estimated: false },
    });
  };
  run.calls = 0;
  return run;
}

export type Gateway = RunningServer & AsyncDisposable & { port: number };

/** Starts the real server; `await using` shuts it down. */
export function gateway(config: Config, options: ServerOptions = {}): Gateway {
  const server = startServer(config, { graceMs: 0, abortGraceMs: 3000, ...options });
  return Object.assign(server, {
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  });
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

const encoder = new TextEncoder();

/** Concatenates text and byte pieces. */
export function bytes(...parts: (string | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const chunks = parts.map((p) => typeof p === "string" ? encoder.encode(p) : p);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/**
 * Sends one request as written (head lines exactly as given, `Connection: close` added) and
 * reads the whole reply. `head` is e.g. `["POST /v1/messages HTTP/1.1", "Host: …"]`.
 */
export async function rawRequest(
  port: number,
  head: string[],
  body: string | Uint8Array = "",
): Promise<RawResponse> {
  const payload = typeof body === "string" ? encoder.encode(body) : body;
  const lines = [...head];
  if (!head.some((l) => /^content-length:/i.test(l)) && payload.length > 0) {
    lines.push(`Content-Length: ${payload.length}`);
  }
  lines.push("Connection: close");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await writeAll(conn, bytes(lines.join("\r\n"), "\r\n\r\n", payload));
    const received: Uint8Array[] = [];
    const buffer = new Uint8Array(64 * 1024);
    // Until the server closes, or a reply with a content-length is complete (a server that
    // refused a body unread may keep the connection open for it).
    while (!isComplete(bytes(...received))) {
      const n = await conn.read(buffer);
      if (n === null) break;
      received.push(buffer.slice(0, n));
    }
    return parseResponse(new TextDecoder().decode(bytes(...received)));
  } finally {
    conn.close();
  }
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) offset += await conn.write(data.subarray(offset));
}

function isComplete(data: Uint8Array): boolean {
  const text = new TextDecoder().decode(data);
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return false;
  const length = /^content-length:\s*(\d+)/im.exec(text.slice(0, split));
  return length !== null && data.length - encoder.encode(text.slice(0, split + 4)).length >=
      Number(length[1]);
}

function parseResponse(text: string): RawResponse {
  const split = text.indexOf("\r\n\r\n");
  assert.ok(split > 0, `not an HTTP response: ${JSON.stringify(text.slice(0, 200))}`);
  const [status, ...lines] = text.slice(0, split).split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const i = line.indexOf(":");
    headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  let body = text.slice(split + 4);
  if (headers.get("transfer-encoding")?.includes("chunked")) body = unchunk(body);
  return { status: Number(status.split(" ")[1]), headers, body };
}

function unchunk(text: string): string {
  let out = "";
  let rest = text;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** Which error envelope an endpoint answers in. */
export type Envelope = "anthropic" | "openai";

/**
 * Asserts a JSON error envelope of the given shape whose text shows no stack trace or source
 * path; returns the error's `type` and `message`.
 */
export function assertErrorEnvelope(
  body: string,
  shape: Envelope,
  what: string,
): { type: string; message: string } {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body);
  } catch {
    throw new assert.AssertionError({
      message: `${what}: body is not JSON: ${body.slice(0, 200)}`,
    });
  }
  assertNoStackTrace(body, what);
  const error = json.error as Record<string, unknown> | undefined;
  assert.ok(error && typeof error === "object", `${what}: no error object in ${body}`);
  assert.equal(typeof error.message, "string", `${what}: error.message`);
  assert.equal(typeof error.type, "string", `${what}: error.type`);
  if (shape === "anthropic") {
    assert.equal(json.type, "error", `${what}: Anthropic envelope has type "error"`);
    assert.deepEqual(Object.keys(json).sort(), ["error", "type"], what);
  } else {
    // CONTRACT.md §2.3: `type: "error"` on every envelope, OpenAI's `{error:{…}}` shape inside.
    assert.equal(json.type, "error", `${what}: OpenAI-shaped envelope has type "error"`);
    assert.deepEqual(Object.keys(json).sort(), ["error", "type"], what);
    assert.ok("param" in error && "code" in error, `${what}: OpenAI error has param and code`);
  }
  return { type: error.type as string, message: error.message as string };
}

/** No `at file:///…` frames, source paths or error class dumps in a reply. */
export function assertNoStackTrace(text: string, what: string): void {
  for (const pattern of [/\bat .*:\d+:\d+/, /file:\/\//, /\/src\/[\w/]+\.ts/, /\w+Error:/]) {
    assert.doesNotMatch(text, pattern, `${what}: reply shows internals`);
  }
}

/** A minimal valid body per endpoint, with a marker the answer carries back. */
export function goodBody(endpoint: "messages" | "responses" | "count_tokens", marker = "ping") {
  return endpoint === "responses"
    ? { model: "gpt-5.5", input: marker }
    : { model: "claude-opus-4-8", max_tokens: 100, messages: [{ role: "user", content: marker }] };
}
