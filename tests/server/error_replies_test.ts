/**
 * Every error the gateway answers, on both protocols' paths: its status, headers and envelope
 * (Anthropic's on /v1/messages, OpenAI's on /v1/responses), through the app in-process; and the
 * gate's own raw replies, which carry both protocols' fields.
 */
import assert from "node:assert/strict";
import type { Context } from "hono";
import { FakeClock } from "../support/fake_clock.ts";
import { claudeAsk, codexBody, codexInput } from "../support/host_bodies.ts";
import { deps } from "../support/scripted_turns.ts";
import { echo, serverConfig, TOKEN } from "../support/echo_server.ts";
import type { ConfigFile } from "../../src/config/mod.ts";
import type { ProtocolDeps, ProtocolHandler } from "../../src/protocol/protocol_handler.ts";
import { createMessagesHandler } from "../../src/protocol/messages/handler.ts";
import { createResponsesHandler } from "../../src/protocol/responses/handler.ts";
import { TURN_FAILED } from "../../src/protocol/stream_turn.ts";
import { type AppLimits, createApp, type RequestEnv } from "../../src/server/app.ts";
import { AUTH_THROTTLE_RULE, AuthThrottle } from "../../src/server/middleware/auth_throttle.ts";
import { BodyBudget } from "../../src/server/middleware/body_budget.ts";
import { TurnSlots } from "../../src/server/middleware/turn_slots.ts";
import { gateResponse } from "../../src/server/connections.ts";

type Protocol = "messages" | "responses";
const PATHS: Record<Protocol, string> = { messages: "/v1/messages", responses: "/v1/responses" };

interface AppSetup {
  config?: ConfigFile;
  limits?: AppLimits;
  /** Both paths' handler (default: echo). */
  handler?: ProtocolHandler;
  /** The real protocol handlers over these deps instead. */
  protocol?: ProtocolDeps;
}

function appOf(setup: AppSetup = {}) {
  const real = setup.protocol;
  return createApp({
    config: serverConfig(setup.config),
    messages: real ? createMessagesHandler(real) : setup.handler ?? echo("m"),
    responses: real ? createResponsesHandler(real) : setup.handler ?? echo("r"),
    limits: setup.limits,
  });
}

const post = (body: string, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  body,
  headers: { "content-type": "application/json", ...headers },
});

/** A request each host could send on its own path. */
const hostBody = (protocol: Protocol, extra: Record<string, unknown> = {}) =>
  JSON.stringify(
    protocol === "messages"
      ? claudeAsk("hi", { stream: false, ...extra })
      : codexBody(codexInput("hi"), { stream: false, ...extra }),
  );

/** One image each protocol carries, over a 1-byte image limit. */
const withImage = (protocol: Protocol) =>
  JSON.stringify(
    protocol === "messages"
      ? claudeAsk("hi", {
        stream: false,
        messages: [{
          role: "user",
          content: [
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: "iVBORw0K" },
            },
            { type: "text", text: "what is this?" },
          ],
        }],
      })
      : codexBody([{
        type: "message",
        role: "user",
        content: [
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0K" },
          { type: "input_text", text: "what is this?" },
        ],
      }], { stream: false }),
  );

const failingTurn = deps(() => {
  throw new Error("kaboom");
}, { streamProgress: false });

interface ErrorCase {
  name: string;
  status: number;
  message: string | RegExp;
  /** Anthropic's `error.type`. */
  messagesType: string;
  /** OpenAI's `error.type`, `code` and `param`. */
  responses: { type: string; code: string | null; param?: string | null };
  retryAfter?: RegExp;
  send: (protocol: Protocol) => Response | Promise<Response>;
}

const CASES: ErrorCase[] = [
  {
    name: "a request from a council child",
    status: 400,
    message: "recursive call from a council child",
    messagesType: "invalid_request_error",
    responses: { type: "invalid_request_error", code: null },
    send: (p) => appOf().request(PATHS[p], post("{}", { "x-council-depth": "1" })),
  },
  {
    name: "a body that is not JSON",
    status: 400,
    message: /^request body is not valid JSON: /,
    messagesType: "invalid_request_error",
    responses: { type: "invalid_request_error", code: "invalid_request_error" },
    send: (p) => appOf().request(PATHS[p], post("{bad")),
  },
  {
    name: "a body the protocol's schema refuses",
    status: 400,
    message: /^model: field is required$/,
    messagesType: "invalid_request_error",
    responses: {
      type: "invalid_request_error",
      code: "missing_required_parameter",
      param: "model",
    },
    send: (p) => appOf({ protocol: failingTurn }).request(PATHS[p], post("{}")),
  },
  {
    name: "an image over maxImageBytes",
    status: 413,
    message: /image/,
    messagesType: "request_too_large",
    responses: { type: "invalid_request_error", code: "request_too_large", param: "input" },
    send: (p) =>
      appOf({
        protocol: {
          ...failingTurn,
          attachments: {
            maxImageBytes: 1,
            maxAttachmentBytes: 1024,
            maxAttachments: 10,
            fetchUrls: false,
          },
        },
      }).request(PATHS[p], post(withImage(p))),
  },
  {
    name: "a missing token",
    status: 401,
    message: "unauthorized",
    messagesType: "authentication_error",
    responses: { type: "authentication_error", code: "invalid_api_key" },
    send: (p) => appOf({ config: { token: TOKEN } }).request(PATHS[p], post("{}")),
  },
  {
    name: "an address that failed too often",
    status: 401,
    message: "unauthorized: too many failed attempts from this address; retry in 60s",
    messagesType: "authentication_error",
    responses: { type: "authentication_error", code: "invalid_api_key" },
    retryAfter: /^60$/,
    send: (p) => {
      const throttle = new AuthThrottle({
        ...AUTH_THROTTLE_RULE,
        capacity: 4,
        clock: new FakeClock(),
      });
      for (let i = 0; i < AUTH_THROTTLE_RULE.maxFailures; i++) throttle.failed("10.0.0.9");
      const app = appOf({ config: { token: TOKEN }, limits: { authFailures: throttle } });
      const env: RequestEnv = { peer: "10.0.0.9" };
      return app.request(PATHS[p], post("{}", { "x-api-key": TOKEN }), env);
    },
  },
  {
    name: "a foreign Host",
    status: 403,
    message: /^host "evil\.example" is not allowed/,
    messagesType: "permission_error",
    responses: { type: "permission_error", code: null },
    send: (p) => appOf().request(PATHS[p], post("{}", { host: "evil.example" })),
  },
  {
    name: "a foreign Origin",
    status: 403,
    message: "requests from web pages are not allowed",
    messagesType: "permission_error",
    responses: { type: "permission_error", code: null },
    send: (p) => appOf().request(PATHS[p], post("{}", { origin: "https://evil.example" })),
  },
  {
    name: "a method the path does not serve",
    status: 404,
    message: /^not found: GET \/v1\/(messages|responses)$/,
    messagesType: "not_found_error",
    responses: { type: "not_found_error", code: null },
    send: (p) => appOf().request(PATHS[p]),
  },
  {
    name: "a body over maxBodyBytes",
    status: 413,
    message: "request body exceeds 64 bytes",
    messagesType: "request_too_large",
    responses: { type: "invalid_request_error", code: "request_too_large" },
    send: (p) => appOf({ config: { maxBodyBytes: 64 } }).request(PATHS[p], post("x".repeat(100))),
  },
  {
    name: "a body not declared JSON",
    status: 415,
    message: 'content-type must be application/json (got "text/plain")',
    messagesType: "invalid_request_error",
    responses: { type: "invalid_request_error", code: null },
    send: (p) => appOf().request(PATHS[p], post("{}", { "content-type": "text/plain" })),
  },
  {
    name: "request bytes in flight over their budget",
    status: 429,
    message: "too many request bytes in flight; retry in 1s",
    messagesType: "rate_limit_error",
    responses: { type: "rate_limit_error", code: "rate_limit_exceeded" },
    retryAfter: /^1$/,
    send: (p) => {
      const bodies = new BodyBudget(1);
      bodies.reserve(1); // another request's body, still being read
      return appOf({ limits: { bodies } }).request(PATHS[p], post("{}"));
    },
  },
  {
    name: "no turn slot and no room in the queue",
    status: 429,
    message: /^the gateway is busy; retry in [1-9]\d*s$/,
    messagesType: "rate_limit_error",
    responses: { type: "rate_limit_error", code: "rate_limit_exceeded" },
    retryAfter: /^[1-9]\d*$/,
    send: (p) => {
      const turns = new TurnSlots({ maxConcurrent: 0, maxQueued: 0, clock: new FakeClock() });
      return appOf({ limits: { turns } }).request(PATHS[p], post("{}"));
    },
  },
  {
    name: "an exception in the server",
    status: 500,
    message: "internal server error",
    messagesType: "api_error",
    responses: { type: "server_error", code: "server_error" },
    send: (p) =>
      appOf({
        handler: (_c: Context) => {
          throw new Error("kaboom");
        },
      }).request(PATHS[p], post("{}")),
  },
  {
    name: "a council turn that fails",
    status: 500,
    message: TURN_FAILED,
    messagesType: "api_error",
    responses: { type: "server_error", code: "server_error" },
    send: (p) => appOf({ protocol: failingTurn }).request(PATHS[p], post(hostBody(p))),
  },
];

function assertMessage(actual: unknown, expected: string | RegExp, label: string) {
  if (typeof expected === "string") assert.equal(actual, expected, label);
  else assert.match(String(actual), expected, label);
}

for (const protocol of ["messages", "responses"] as const) {
  Deno.test(`error replies: every refusal on ${PATHS[protocol]} is in its protocol's envelope`, async () => {
    for (const c of CASES) {
      const label = `${c.name} on ${PATHS[protocol]}`;
      const res = await c.send(protocol);
      assert.equal(res.status, c.status, label);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/, label);
      if (c.retryAfter) assert.match(res.headers.get("retry-after") ?? "", c.retryAfter, label);
      else assert.equal(res.headers.get("retry-after"), null, label);
      const body = await res.json();
      assert.equal(body.type, "error", label);
      assertMessage(body.error.message, c.message, label);
      const expected = protocol === "messages"
        ? { type: c.messagesType, message: body.error.message }
        : {
          message: body.error.message,
          type: c.responses.type,
          param: c.responses.param ?? null,
          code: c.responses.code,
        };
      assert.deepEqual(body, { type: "error", error: expected }, label);
    }
  });
}

Deno.test("error replies: the gate's raw replies carry both protocols' fields", () => {
  const cases: [number, string, string, number | undefined][] = [
    [400, "Bad Request", "invalid_request_error", undefined],
    [408, "Request Timeout", "invalid_request_error", undefined],
    [431, "Request Header Fields Too Large", "invalid_request_error", undefined],
    [501, "Not Implemented", "invalid_request_error", undefined],
    [503, "Service Unavailable", "overloaded_error", 1],
    [505, "HTTP Version Not Supported", "invalid_request_error", undefined],
  ];
  for (const [status, reason, type, retryAfter] of cases) {
    const text = new TextDecoder().decode(gateResponse(status, "why", retryAfter));
    const [head, body] = text.split("\r\n\r\n");
    assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} ${reason}\\r\\n`));
    assert.match(head, /\r\ncontent-type: application\/json\r\n/);
    assert.equal(head.includes("retry-after"), retryAfter !== undefined, `${status}`);
    assert.deepEqual(JSON.parse(body), {
      type: "error",
      error: { type, message: "why", param: null, code: null },
    }, `${status}`);
  }
});

Deno.test("error replies: Codex's model list is refused in OpenAI's shape, Claude Code's in Anthropic's", async () => {
  const app = appOf({ config: { token: TOKEN } });
  const codex = await app.request("/v1/models?client_version=0.171.0");
  assert.equal(codex.status, 401);
  assert.deepEqual(await codex.json(), {
    type: "error",
    error: {
      message: "unauthorized",
      type: "authentication_error",
      param: null,
      code: "invalid_api_key",
    },
  });
  const byOriginator = await app.request("/v1/models", { headers: { originator: "codex_exec" } });
  assert.equal((await byOriginator.json()).error.code, "invalid_api_key");
  const claude = await app.request("/v1/models?limit=1000");
  assert.equal(claude.status, 401);
  assert.deepEqual(await claude.json(), {
    type: "error",
    error: { type: "authentication_error", message: "unauthorized" },
  });
});

Deno.test("error replies: a WebSocket upgrade on /v1/responses is a 426 in OpenAI's shape", async () => {
  const res = await appOf().request("/v1/responses", {
    headers: { connection: "Upgrade", upgrade: "websocket" },
  });
  assert.equal(res.status, 426);
  assert.deepEqual(await res.json(), {
    type: "error",
    error: {
      message: "the WebSocket transport is not served here: POST /v1/responses",
      type: "invalid_request_error",
      param: null,
      code: "websocket_not_served",
    },
  });
});

Deno.test("team database down: a person key gets 503 with retry-after, and its address is not locked out", async () => {
  const throttle = new AuthThrottle({ ...AUTH_THROTTLE_RULE, capacity: 4, clock: new FakeClock() });
  let gated = 0;
  const app = createApp({
    config: serverConfig({ token: TOKEN }),
    messages: echo("m"),
    responses: echo("r"),
    limits: { authFailures: throttle },
    team: {
      // As the team does: only a person key's lookup reaches the database, which is down.
      personKey: (presented) =>
        presented.some((t) => t.startsWith("cgk_"))
          ? Promise.reject(new Error("connection refused"))
          : Promise.resolve(undefined),
      gate: (_presented, next) => {
        gated++;
        return next().then(() => undefined);
      },
    },
  });
  const env: RequestEnv = { peer: "10.0.0.7" };
  for (let i = 0; i < AUTH_THROTTLE_RULE.maxFailures + 2; i++) {
    const reply = await app.request(
      PATHS.messages,
      post(hostBody("messages"), { "x-api-key": "cgk_someones_key" }),
      env,
    );
    assert.equal(reply.status, 503, `request ${i + 1}`);
    assert.equal(reply.headers.get("retry-after"), "2");
    const body = await reply.json();
    assert.equal(body.type, "error");
    assert.match(body.error.message, /database is unreachable/);
  }
  assert.equal(throttle.blockedForMs("10.0.0.7"), 0, "no failure was counted");
  assert.equal(gated, 0);
  // An unknown token is still a 401 and still counted.
  const wrong = await app.request(PATHS.messages, post("{}", { "x-api-key": "wrong" }), env);
  assert.equal(wrong.status, 401);
});
