import assert from "node:assert/strict";
import { resetSync } from "@logtape/logtape";
import type { Context } from "hono";
import { FakeClock } from "../support/fake_clock.ts";
import { type Config, ConfigError, loadConfig } from "../../src/config/mod.ts";
import { setupLogging } from "../../src/base/log.ts";
import type { ProtocolHandler } from "../../src/protocol/protocol_handler.ts";
import { DEFAULT_GRACE_MS, gatewaySecrets, startServer } from "../../src/server/wiring.ts";
import { selfOriginsFor } from "../../src/base/origins.ts";
import { createApp } from "../../src/server/app.ts";
import { ListenError } from "../../src/server/serve.ts";
import { envOf } from "../support/temp_scripts.ts";
import { configOf } from "../support/test_config.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { eventually } from "../support/wait.ts";

const TOKEN = "t0ken-Secret-42";

function testConfig(overrides: Record<string, string> = {}): Readonly<Config> {
  return loadConfig({
    configPath: undefined,
    env: envOf({ PATH: "", SVC_GATEWAY_PORT: "0", ...overrides }),
    cwd: "/nonexistent-dir-for-tests",
  });
}

/** Protocol handlers that echo what the server passed them. */
const echo = (label: string): ProtocolHandler => (c: Context, body: unknown) =>
  c.json({ handler: label, body });

function app(config = testConfig(), handlers: Partial<Record<"m" | "r", ProtocolHandler>> = {}) {
  return createApp({
    config,
    messages: handlers.m ?? echo("messages"),
    responses: handlers.r ?? echo("responses"),
    startedAt: new Date("2026-01-01T00:00:00.000Z"),
  });
}

const post = (body: BodyInit | null, headers: Record<string, string> = {}) => ({
  method: "POST",
  body,
  headers: { "content-type": "application/json", ...headers },
});

/** Captures log lines while fn runs. */
async function withLogs(fn: () => Promise<void>, json = false): Promise<string[]> {
  const lines: string[] = [];
  setupLogging({ level: "debug", json, secrets: [TOKEN], write: (l) => lines.push(l) });
  try {
    await fn();
  } finally {
    resetSync();
  }
  return lines;
}

Deno.test("server: the protocol handlers get the parsed body; query strings are ignored", async () => {
  const a = app();
  let res = await a.request("/v1/messages?beta=true", post('{"model":"m","n":1}'));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { handler: "messages", body: { model: "m", n: 1 } });
  res = await a.request("/v1/responses", post('{"input":"hi"}'));
  assert.deepEqual(await res.json(), { handler: "responses", body: { input: "hi" } });
});

Deno.test("server: unknown paths and wrong methods get the 404 envelope of the path's protocol", async () => {
  const a = app();
  for (
    const [method, path] of [
      ["GET", "/"],
      ["GET", "/v1/nothing"],
      ["GET", "/v1/messages"],
      ["POST", "/v1/models"],
      ["DELETE", "/v1/responses"],
      ["POST", "/v1/messages/"],
    ]
  ) {
    const res = await a.request(path, { method });
    assert.equal(res.status, 404, `${method} ${path}`);
    const message = `not found: ${method} ${path}`;
    assert.deepEqual(
      await res.json(),
      path === "/v1/responses"
        ? { type: "error", error: { message, type: "not_found_error", param: null, code: null } }
        : { type: "error", error: { type: "not_found_error", message } },
    );
  }
});

Deno.test("server: malformed JSON is a 400 in each protocol's envelope", async () => {
  const a = app();
  for (const bad of ["{bad", "", "   ", "[1,"]) {
    let res = await a.request("/v1/messages", post(bad));
    assert.equal(res.status, 400);
    const anthropic = await res.json();
    assert.equal(anthropic.type, "error");
    assert.equal(anthropic.error.type, "invalid_request_error");
    assert.match(anthropic.error.message, /^request body is (not valid JSON|empty)/);

    res = await a.request("/v1/responses", post(bad));
    assert.equal(res.status, 400);
    const openai = await res.json();
    assert.deepEqual(Object.keys(openai).sort(), ["error", "type"]);
    assert.equal(openai.error.type, "invalid_request_error");
    assert.equal(openai.error.param, null);
    assert.match(openai.error.message, /^request body is (not valid JSON|empty)/);
  }
  const res = await a.request("/v1/messages", post(new Uint8Array([0x7b, 0xff, 0x7d])));
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.message, "request body is not valid UTF-8");
});

Deno.test("server: bodies over maxBodyBytes get 413, with or without content-length", async () => {
  const a = app(testConfig(), {});
  const small = createApp({
    config: { ...testConfig(), maxBodyBytes: 64 },
    messages: echo("messages"),
    responses: echo("responses"),
  });
  const big = JSON.stringify({ text: "x".repeat(100) });
  // Declared length over the limit.
  let res = await small.request("/v1/messages", post(big));
  assert.equal(res.status, 413);
  assert.deepEqual(await res.json(), {
    type: "error",
    error: { type: "request_too_large", message: "request body exceeds 64 bytes" },
  });
  // Streamed body without content-length: counted while reading.
  const stream = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('"0123456789"'));
        controller.close();
      },
    });
  const req = new Request("http://localhost/v1/responses", {
    method: "POST",
    body: stream(),
    duplex: "half",
  } as RequestInit);
  assert.equal(req.headers.get("content-length"), null);
  res = await small.request(req);
  assert.equal(res.status, 413);
  const openai = await res.json();
  assert.equal(openai.error.code, "request_too_large");
  res = await small.request("/v1/messages/count_tokens", post(big));
  assert.equal(res.status, 413);
  // At the limit is fine.
  res = await small.request("/v1/messages", post(JSON.stringify({ t: "x".repeat(54) })));
  assert.equal(res.status, 200);
  // The default limit is generous.
  res = await a.request("/v1/messages", post(big));
  assert.equal(res.status, 200);
});

Deno.test("server: a body without content-length stops being read once past the limit", async () => {
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(1024));
    },
  });
  const small = createApp({
    config: { ...testConfig(), maxBodyBytes: 4096 },
    messages: echo("messages"),
    responses: echo("responses"),
  });
  const req = new Request("http://localhost/v1/messages", {
    method: "POST",
    body: endless,
    headers: { "content-type": "application/json" },
    duplex: "half",
  } as RequestInit);
  const res = await small.request(req);
  assert.equal(res.status, 413);
  assert.deepEqual(await res.json(), {
    type: "error",
    error: { type: "request_too_large", message: "request body exceeds 4096 bytes" },
  });
  assert.ok(pulled <= 8, `pulled ${pulled} chunks`);
});

Deno.test("server: count_tokens estimates, and answers 0 for a body that fails to parse", async () => {
  const a = app();
  let res = await a.request(
    "/v1/messages/count_tokens?beta=true",
    post(JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(41) }] })),
  );
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { input_tokens: 11 });
  for (const bad of ["{nope", "", '"string"', "{}"]) {
    res = await a.request("/v1/messages/count_tokens", post(bad));
    assert.equal(res.status, 200, bad);
    assert.deepEqual(await res.json(), { input_tokens: 0 }, bad);
  }
});

Deno.test("server: GET /v1/models lists the council (svc-council, claude-council) and the agents' models", async () => {
  const config = loadConfig({
    env: envOf({ PATH: "" }),
    cwd: "/nonexistent-dir-for-tests",
    configPath: undefined,
  });
  const withAgents = {
    ...config,
    defaultAgents: [
      { name: "claude", runner: "claude" as const, model: "opus", args: [], env: {}, timeoutMs: 1 },
    ],
  };
  // Claude Code asks with `?limit=1000` (and a 3 s time-out): the same whole list.
  const res = await app(withAgents).request("/v1/models?limit=1000");
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(body.data.map((m: { id: string }) => m.id), [
    "svc-council",
    "claude-council",
    "opus",
  ]);
  assert.equal(body.data[0].created_at, "2026-01-01T00:00:00.000Z");
  assert.equal(body.has_more, false);
  assert.equal(body.first_id, "svc-council");
  assert.equal(body.last_id, "opus");
});

Deno.test("server: with a token, every route needs it (bearer or x-api-key), 401 before 404", async () => {
  const a = app(testConfig({ SVC_GATEWAY_TOKEN: TOKEN }));
  const unauthorized = {
    type: "error",
    error: { type: "authentication_error", message: "unauthorized" },
  };
  // /v1/responses answers in OpenAI's envelope, as Codex reads it.
  const unauthorizedOpenAi = {
    type: "error",
    error: {
      message: "unauthorized",
      type: "authentication_error",
      param: null,
      code: "invalid_api_key",
    },
  };
  const cases: [string, RequestInit][] = [
    ["/v1/models", {}],
    ["/v1/messages", post("{}")],
    ["/v1/responses", post("{}")],
    ["/v1/messages/count_tokens", post("{}")],
    ["/nowhere", {}],
  ];
  for (const [path, init] of cases) {
    for (
      const headers of <Record<string, string>[]> [
        {},
        { authorization: "Bearer wrong" },
        { "x-api-key": "wrong" },
        { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
        { authorization: TOKEN },
      ]
    ) {
      const res = await a.request(path, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), ...headers },
      });
      assert.equal(res.status, 401, `${path} ${JSON.stringify(headers)}`);
      const body = await res.json();
      assert.deepEqual(body, path === "/v1/responses" ? unauthorizedOpenAi : unauthorized);
      assert.ok(!JSON.stringify(body).includes(TOKEN));
    }
  }
  let res = await a.request("/v1/models", { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  res = await a.request("/v1/models", { headers: { "x-api-key": TOKEN } });
  assert.equal(res.status, 200);
  res = await a.request("/v1/messages", post("{}", { "x-api-key": TOKEN }));
  assert.equal(res.status, 200);
  res = await a.request("/nowhere", { headers: { "x-api-key": TOKEN } });
  assert.equal(res.status, 404);
});

Deno.test("server: a request from a council child (x-council-depth) is refused with 400", async () => {
  let called = false;
  const a = app(testConfig(), {
    m: (c) => {
      called = true;
      return c.json({});
    },
  });
  let res = await a.request("/v1/messages", post("{}", { "x-council-depth": "1" }));
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), {
    type: "error",
    error: { type: "invalid_request_error", message: "recursive call from a council child" },
  });
  assert.equal(called, false);
  res = await a.request("/v1/responses", post("{}", { "x-council-depth": "2" }));
  assert.equal(res.status, 400);
  const openai = await res.json();
  assert.equal(openai.error.type, "invalid_request_error");
  assert.equal(openai.error.message, "recursive call from a council child");
  res = await a.request("/v1/models", { headers: { "x-council-depth": "1" } });
  assert.equal(res.status, 400);
});

Deno.test("server: a thrown exception becomes the 500 envelope and is logged without secrets", async () => {
  const a = app(testConfig({ SVC_GATEWAY_TOKEN: TOKEN }), {
    m: () => {
      throw new Error(`kaboom with ${TOKEN}`);
    },
  });
  const lines = await withLogs(async () => {
    const res = await a.request("/v1/messages", post("{}", { authorization: `Bearer ${TOKEN}` }));
    assert.equal(res.status, 500);
    const body = await res.json();
    assert.equal(body.type, "error");
    assert.equal(body.error.message, "internal server error");
    assert.ok(!JSON.stringify(body).includes(TOKEN));
    // The server keeps serving.
    const ok = await a.request("/v1/models", { headers: { "x-api-key": TOKEN } });
    assert.equal(ok.status, 200);
  });
  assert.ok(lines.some((l) => l.includes("kaboom")), lines.join(""));
  assert.ok(lines.every((l) => !l.includes(TOKEN)), lines.join(""));
});

Deno.test("server: access log lines never contain the presented token or query", async () => {
  const a = app(testConfig({ SVC_GATEWAY_TOKEN: TOKEN }));
  const lines = await withLogs(async () => {
    await (await a.request("/v1/models?key=abc", { headers: { "x-api-key": TOKEN } })).body
      ?.cancel();
    await (await a.request("/v1/messages", post("{}", { "x-api-key": "wrong-token-999" }))).body
      ?.cancel();
    await (await a.request("/v1/messages", post("{}", { authorization: `Bearer ${TOKEN}` }))).body
      ?.cancel();
  }, true);
  assert.equal(lines.length, 3);
  const records = lines.map((l) => JSON.parse(l));
  assert.deepEqual(records.map((r) => [r.method, r.path, r.status]), [
    ["GET", "/v1/models", 200],
    ["POST", "/v1/messages", 401],
    ["POST", "/v1/messages", 200],
  ]);
  for (const line of lines) {
    assert.ok(
      !line.includes(TOKEN) && !line.includes("wrong-token-999") && !line.includes("key=abc"),
    );
  }
});

Deno.test("server: a streamed reply's access line is written when its stream ends (the turn's real duration)", async () => {
  const open = Promise.withResolvers<void>();
  const streaming: ProtocolHandler = () => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode("event: ping\ndata: {}\n\n"));
        await open.promise;
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
  const a = app(testConfig(), { m: streaming, r: streaming });
  const lines: string[] = [];
  setupLogging({ level: "debug", json: true, secrets: [], write: (l) => lines.push(l) });
  try {
    const res = await a.request("/v1/messages", post("{}"));
    const reader = res.body!.getReader();
    await reader.read();
    assert.deepEqual(lines, [], "no access line while the stream is still open");
    open.resolve();
    while (!(await reader.read()).done) { /* drain */ }
    assert.equal(lines.length, 1, "one line once the stream ended");
    // A client that leaves mid-stream ends the request too.
    const gone = await a.request("/v1/responses", post("{}"));
    await gone.body!.cancel();
  } finally {
    resetSync();
  }
  const records = lines.map((l) => JSON.parse(l));
  assert.deepEqual(records.map((r) => [r.method, r.path, r.status]), [
    ["POST", "/v1/messages", 200],
    ["POST", "/v1/responses", 200],
  ]);
  // The one the client left says so; the one that ran to its end does not.
  assert.match(records[0].msg, /^POST \/v1\/messages 200 \d+ms$/);
  assert.match(records[1].msg, /^POST \/v1\/responses 200 \d+ms \(closed by the client\)$/);
});

Deno.test("server: selfOriginsFor covers the loopback names and a wildcard bind", () => {
  assert.deepEqual(selfOriginsFor("127.0.0.1", 5), [
    "http://127.0.0.1:5",
    "http://localhost:5",
    "http://[::1]:5",
  ]);
  assert.deepEqual(selfOriginsFor("0.0.0.0", 5, ["10.1.2.3"]), [
    "http://0.0.0.0:5",
    "http://127.0.0.1:5",
    "http://localhost:5",
    "http://[::1]:5",
    "http://10.1.2.3:5",
  ]);
  assert.deepEqual(selfOriginsFor("192.168.1.5", 5), ["http://192.168.1.5:5"]);
});

Deno.test("startServer: binds port 0, logs the startup line with the real port, serves", async () => {
  const config = testConfig({ SVC_GATEWAY_TOKEN: TOKEN });
  let server: ReturnType<typeof startServer> | undefined;
  const lines = await withLogs(async () => {
    server = startServer(config, { messages: echo("m"), responses: echo("r") });
    assert.notEqual(server.addr.port, 0);
    assert.equal(server.origin, `http://127.0.0.1:${server.addr.port}`);
    assert.ok(server.origins.includes(`http://localhost:${server.addr.port}`));
    const res = await fetch(`${server.origin}/v1/models`, { headers: { "x-api-key": TOKEN } });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).first_id, "svc-council");
    const denied = await fetch(`${server.origin}/v1/models`);
    assert.equal(denied.status, 401);
    await denied.body?.cancel();
    await server.shutdown();
  });
  assert.equal(
    lines[0].replace(/^\S+ INFO {2}/, "").trimEnd(),
    `listening on http://127.0.0.1:${
      server!.addr.port
    } (/v1/messages, /v1/responses) fanOutPolicy=auto fanOutScope=first-turn maxTurns=100 ` +
      "auth=on streamProgress=true progressDetail=telemetry logLevel=info agents=none " +
      "config=defaults",
  );
  assert.ok(lines.some((l) => l.includes("WARN  no agents")));
  assert.ok(lines.some((l) => l.includes("stopped")));
  assert.ok(lines.every((l) => !l.includes(TOKEN)));
});

Deno.test("startServer: refuses an unauthenticated non-loopback bind", () => {
  assert.throws(
    () =>
      startServer(testConfig({ SVC_GATEWAY_HOST: "0.0.0.0" }), {
        messages: echo("m"),
        responses: echo("r"),
      }),
    (err: Error) => err instanceof ConfigError && /0\.0\.0\.0" is reachable/.test(err.message),
  );
});

Deno.test("startServer: a port in use is a ListenError", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = String((listener.addr as Deno.NetAddr).port);
    await withLogs(() => {
      assert.throws(
        () =>
          startServer(testConfig({ SVC_GATEWAY_PORT: port }), {
            messages: echo("m"),
            responses: echo("r"),
          }),
        (err: Error) =>
          err instanceof ListenError &&
          err.message === `cannot listen on 127.0.0.1:${port}: address already in use`,
      );
      return Promise.resolve();
    });
  } finally {
    listener.close();
  }
});

/** Pids of this test process's children whose command line matches `pattern` (ps). */
async function childrenMatching(pattern: RegExp): Promise<number[]> {
  const out = await new Deno.Command("ps", { args: ["-A", "-o", "pid=,ppid=,args="] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const [pid, ppid, ...args] = line.trim().split(/\s+/);
    return Number(ppid) === Deno.pid && pattern.test(args.join(" ")) ? [Number(pid)] : [];
  });
}

Deno.test({
  name: "startServer: a port in use leaves no watchdog behind",
  ignore: Deno.build.os === "windows",
  async fn() {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const watchdogs = () => childrenMatching(/council-gateway-watchdog/);
    const before = (await watchdogs()).length;
    try {
      const port = (listener.addr as Deno.NetAddr).port;
      // A CLI agent: the gateway keeps a watchdog for its children.
      const config = configOf({ port }, [{ ...fakeAgent("claude"), name: "claude" }]);
      await withLogs(() => {
        assert.throws(() => startServer(config), ListenError);
        return Promise.resolve();
      });
      await eventually(
        async () => (await watchdogs()).length === before,
        "the watchdog of the gateway that could not listen to end",
      );
    } finally {
      listener.close();
    }
  },
});

Deno.test("startServer: shutdown lets in-flight requests finish, then cancels them via the request signal", async () => {
  const clock = new FakeClock();
  let sawAbort = false;
  const streaming: ProtocolHandler = (c) => {
    const signal = c.req.raw.signal;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("working\n"));
        signal.addEventListener("abort", () => {
          sawAbort = true;
          controller.enqueue(new TextEncoder().encode("cancelled\n"));
          controller.close();
        });
      },
    });
    return new Response(body);
  };
  await withLogs(async () => {
    const server = startServer(testConfig(), { messages: streaming, responses: echo("r"), clock });
    const res = await fetch(`${server.origin}/v1/messages`, post("{}"));
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), "working\n");

    let finished = false;
    const done = server.shutdown().then(() => (finished = true));
    // New connections are refused while draining.
    await assert.rejects(fetch(`${server.origin}/v1/models`));
    clock.advance(DEFAULT_GRACE_MS - 1);
    assert.equal(sawAbort, false, "in-flight requests get the grace period");
    assert.equal(server.signal.aborted, false);
    clock.advance(1);
    assert.equal(server.signal.aborted, true);
    assert.equal(sawAbort, true);
    let rest = "";
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      rest += new TextDecoder().decode(value);
    }
    assert.equal(rest, "cancelled\n");
    await done;
    assert.equal(finished, true);
    assert.equal(clock.pending, 0, "no timer left behind");
  });
});

Deno.test("startServer: a second shutdown call cancels in-flight turns at once", async () => {
  const clock = new FakeClock();
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  const waiting: ProtocolHandler = (c) =>
    new Promise((resolve) => {
      c.req.raw.signal.addEventListener("abort", () => resolve(c.json({ cancelled: true })));
      entered();
    });
  await withLogs(async () => {
    const server = startServer(testConfig(), { messages: waiting, responses: echo("r"), clock });
    const pending = fetch(`${server.origin}/v1/messages`, post("{}"));
    await reached;
    void server.shutdown();
    assert.equal(server.signal.aborted, false);
    void server.shutdown();
    assert.equal(server.signal.aborted, true);
    const res = await pending;
    assert.deepEqual(await res.json(), { cancelled: true });
    await server.finished;
    assert.equal(clock.pending, 0);
  });
});

Deno.test("server: HEAD is not one of the four endpoints → 404 (Hono would answer it as GET)", async () => {
  const a = app();
  for (const path of ["/v1/models", "/v1/messages", "/"]) {
    const res = await a.request(path, { method: "HEAD" });
    assert.equal(res.status, 404, path);
  }
  assert.equal((await a.request("/v1/models")).status, 200, "GET still works");
});

Deno.test("start-up: a second line names the dashboard and how to connect a host", async () => {
  const { nextStepsLine } = await import("../../src/server/startup_lines.ts");
  const config = { host: "127.0.0.1" } as Parameters<typeof nextStepsLine>[0];
  assert.equal(
    nextStepsLine(config, 6767),
    "dashboard: http://127.0.0.1:6767/ · point a host at it: council-gateway connect claude (or codex)",
  );
  assert.match(nextStepsLine(config, 7001), /:7001\/ .*connect claude --port 7001 \(or codex\)$/);
});

Deno.test("children are kept from the gateway's own secrets: its token and its database's password", () => {
  const previous = Deno.env.get("PGPASSWORD");
  Deno.env.set("PGPASSWORD", "pg-env-secret");
  try {
    const team = configOf({
      token: "gateway-token-0123456789",
      database: "postgres://team:db-s3cret@127.0.0.1:5432/council",
    });
    assert.deepEqual(gatewaySecrets(team), [
      "gateway-token-0123456789",
      "db-s3cret",
      "pg-env-secret",
    ]);
    // Without a database its variables are none of the gateway's business.
    assert.deepEqual(gatewaySecrets(configOf({ token: "gateway-token-0123456789" })), [
      "gateway-token-0123456789",
    ]);
    assert.deepEqual(gatewaySecrets(configOf({})), []);
  } finally {
    if (previous === undefined) Deno.env.delete("PGPASSWORD");
    else Deno.env.set("PGPASSWORD", previous);
  }
});
