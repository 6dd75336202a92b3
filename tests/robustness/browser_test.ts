/**
 * Browser-borne attacks (issue 9 §7): requests shaped like a web page's — simple cross-origin
 * posts (text/plain, forms, multipart, bodies without a type), foreign Origins, DNS-rebinding
 * Hosts, CORS preflights — are refused before any agent runs, and no CORS header is ever sent.
 */
import assert from "node:assert/strict";
import {
  hostAllowed,
  hostRule,
  isJsonContentType,
  isLoopbackOrigin,
  splitHost,
} from "../../src/server/middleware/browser_guards.ts";
import {
  assertErrorEnvelope,
  configWith,
  gateway,
  goodBody,
  instantAgent,
  rawRequest,
  TOKEN,
} from "../support/real_server.ts";

/** What a page's `fetch(url, {method: "POST", mode: "no-cors", body})` adds to a request. */
function pageHeaders(origin: string): Record<string, string> {
  return {
    origin,
    referer: `${origin}/`,
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "empty",
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36",
  };
}

const EVIL = "https://evil.example";
const BODY = JSON.stringify(goodBody("messages"));

function assertNoCors(headers: Headers, what: string): void {
  const cors = [...headers.keys()].filter((name) => name.startsWith("access-control-"));
  assert.deepEqual(cors, [], `${what}: CORS headers sent`);
}

Deno.test("guard: Host values name this gateway only with its own names and port", () => {
  const rule = hostRule(["http://127.0.0.1:6767", "http://localhost:6767", "http://[::1]:6767"], [
    "Gateway.LAN",
  ]);
  for (const ok of ["127.0.0.1:6767", "localhost:6767", "LOCALHOST:6767", "[::1]:6767"]) {
    assert.ok(hostAllowed(ok, rule), ok);
  }
  assert.ok(hostAllowed("gateway.lan:6767", rule), "allowedHosts, any case");
  for (
    const bad of [
      "evil.example:6767", // DNS rebinding: the attacker's name resolving to 127.0.0.1
      "127.0.0.1", // port 80
      "127.0.0.1:6768",
      "localhost.:6767",
      "127.0.0.1.evil.example:6767",
      "evil.example@127.0.0.1:6767",
      "127.0.0.1:6767/x",
      "%31%32%37.0.0.1:6767",
      "gateway.lan:80",
      "",
      "::1:6767",
    ]
  ) {
    assert.ok(!hostAllowed(bad, rule), bad);
  }
  // An origin no URL can hold is skipped, not fatal.
  assert.ok(hostAllowed("localhost:1", hostRule(["http://[fe80::1%eth0]:1", "http://x:1"], [])));
  // Without a listener the port is unknown and not checked.
  assert.ok(hostAllowed("localhost", hostRule([], [])));
  assert.ok(!hostAllowed("evil.example", hostRule([], [])));
  assert.deepEqual(splitHost("[::1]:80"), { name: "::1", port: 80 });
  assert.deepEqual(splitHost("Example.COM"), { name: "example.com", port: 80 });
  assert.equal(splitHost("a b"), undefined);
});

Deno.test("guard: loopback origins and JSON content types", () => {
  for (
    const ok of [
      "http://localhost:3000",
      "http://127.0.0.1",
      "https://[::1]:8443",
      "http://x.localhost",
    ]
  ) {
    assert.ok(isLoopbackOrigin(ok), ok);
  }
  for (
    const bad of [
      "null",
      "https://evil.example",
      "http://localhost.evil.example",
      "http://127.0.0.1.evil.example",
      "file:///home/me/page.html",
      "chrome-extension://abcdef",
      "",
    ]
  ) {
    assert.ok(!isLoopbackOrigin(bad), bad);
  }
  for (const ok of ["application/json", "Application/JSON", "application/json; charset=utf-8"]) {
    assert.ok(isJsonContentType(ok), ok);
  }
  for (
    const bad of [
      "text/plain",
      "text/plain;charset=UTF-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "text/json",
      "application/json-seq",
      "",
    ]
  ) {
    assert.ok(!isJsonContentType(bad), bad);
  }
});

Deno.test("browser: simple cross-origin posts are refused before any agent runs", async () => {
  const agent = instantAgent();
  await using server = gateway(configWith({ fanOutPolicy: "always" }), { runAgent: agent });
  const url = `${server.origin}/v1/messages`;
  const form = new FormData();
  form.set("model", "claude-opus-4-8");
  const cases: [string, RequestInit, number][] = [
    // A page elsewhere: refused for its Origin, whatever it sends.
    ["text/plain from a page", {
      headers: { ...pageHeaders(EVIL), "content-type": "text/plain;charset=UTF-8" },
      body: BODY,
    }, 403],
    ["JSON-typed from a page", {
      headers: { ...pageHeaders(EVIL), "content-type": "application/json" },
      body: BODY,
    }, 403],
    ["form post navigation", {
      headers: {
        ...pageHeaders(EVIL),
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "document",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "model=x&messages=y",
    }, 403],
    ["sandboxed frame (Origin: null)", {
      headers: { ...pageHeaders("null"), "content-type": "text/plain" },
      body: BODY,
    }, 403],
    // A page on this machine (another dev server): only JSON it cannot send unpreflighted.
    ["text/plain from a local page", {
      headers: { ...pageHeaders("http://localhost:5173"), "content-type": "text/plain" },
      body: BODY,
    }, 415],
    ["multipart from a local page", {
      headers: pageHeaders("http://127.0.0.1:8000"),
      body: form,
    }, 415],
    ["untyped Blob body from a local page", {
      headers: pageHeaders("http://localhost:5173"),
      body: new Blob([BODY]),
    }, 415],
    // No Origin at all (curl -d, an old browser): the type decides.
    ["curl -d (form type)", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: BODY,
    }, 415],
    ["text/plain without Origin", { headers: { "content-type": "text/plain" }, body: BODY }, 415],
    ["text/json", { headers: { "content-type": "text/json" }, body: BODY }, 415],
  ];
  for (const [what, init, status] of cases) {
    for (const path of ["/v1/messages", "/v1/responses", "/v1/messages/count_tokens"]) {
      const res = await fetch(`${server.origin}${path}`, { method: "POST", ...init });
      const body = await res.text();
      assert.equal(res.status, status, `${what} ${path}: ${body}`);
      assertNoCors(res.headers, what);
      const shape = path === "/v1/responses" ? "openai" : "anthropic";
      const error = assertErrorEnvelope(body, shape, `${what} ${path}`);
      assert.equal(error.type, status === 403 ? "permission_error" : "invalid_request_error");
      if (status === 415) assert.match(error.message, /content-type must be application\/json/);
    }
  }
  assert.equal(agent.calls, 0, "no agent ran for a refused request");
  // Foreign origins are refused on every route, GET included.
  const models = await fetch(`${server.origin}/v1/models`, { headers: pageHeaders(EVIL) });
  assert.equal(models.status, 403);
  assertErrorEnvelope(await models.text(), "anthropic", "GET /v1/models from a page");
  assert.equal(agent.calls, 0);

  // What non-browser clients send still works: JSON with parameters, or no type and no Origin.
  for (
    const headers of [
      { "content-type": "application/json; charset=utf-8" },
      { "content-type": "Application/JSON" },
      {},
      { ...pageHeaders("http://localhost:5173"), "content-type": "application/json" },
    ] as Record<string, string>[]
  ) {
    // Bytes, not a string: fetch would add text/plain to a string body.
    const body = new TextEncoder().encode(BODY);
    const res = await fetch(url, { method: "POST", headers, body });
    assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${await res.text()}`);
    assertNoCors(res.headers, "answer");
  }
  assert.ok(agent.calls > 0);
});

Deno.test("browser: a DNS-rebinding Host is refused; the gateway's own names are not", async () => {
  const agent = instantAgent();
  await using server = gateway(configWith({ fanOutPolicy: "never" }), { runAgent: agent });
  const { port } = server;
  const post = (host: string, extra: string[] = []) =>
    rawRequest(port, [
      "POST /v1/messages HTTP/1.1",
      `Host: ${host}`,
      "Content-Type: application/json",
      ...extra,
    ], BODY);

  for (
    const host of [
      `evil.example:${port}`,
      `attacker.rebind.network:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `localhost.:${port}`,
      `127.0.0.1:${port + 1}`,
      "localhost",
      `gateway.lan:${port}`,
    ]
  ) {
    const res = await post(host, [`Origin: http://${host}`, "Sec-Fetch-Site: same-origin"]);
    assert.equal(res.status, 403, `${host}: ${res.body}`);
    const error = assertErrorEnvelope(res.body, "anthropic", host);
    assert.match(error.message, /is not allowed; add it to allowedHosts/);
    assertNoCors(res.headers, host);
    // Without an Origin (e.g. a rebinding page's same-origin GET has none) just the same.
    assert.equal((await post(host)).status, 403, `${host} without Origin`);
  }
  assert.equal(agent.calls, 0);

  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`]) {
    const res = await post(host);
    assert.equal(res.status, 200, `${host}: ${res.body}`);
  }
  // HTTP/1.0 without Host: no page sends that; the listener's own address stands in.
  const old = await rawRequest(port, ["GET /v1/models HTTP/1.0"]);
  assert.equal(old.status, 200, old.body);
});

Deno.test("browser: allowedHosts, wildcard and IPv6 binds answer under their own names", async (t) => {
  await t.step("allowedHosts", async () => {
    await using server = gateway(configWith({ allowedHosts: ["gateway.lan"] }), {
      runAgent: instantAgent(),
    });
    const get = (host: string) =>
      rawRequest(server.port, ["GET /v1/models HTTP/1.1", `Host: ${host}`]);
    assert.equal((await get(`gateway.lan:${server.port}`)).status, 200);
    assert.equal((await get(`GATEWAY.lan:${server.port}`)).status, 200);
    assert.equal((await get(`gateway.lan:${server.port + 1}`)).status, 403);
    assert.equal((await get(`other.lan:${server.port}`)).status, 403);
  });
  await t.step("a wildcard bind answers under each interface address", async () => {
    await using server = gateway(configWith({ host: "0.0.0.0", token: TOKEN }), {
      runAgent: instantAgent(),
    });
    const get = (host: string) =>
      rawRequest(server.port, [
        "GET /v1/models HTTP/1.1",
        `Host: ${host}`,
        `Authorization: Bearer ${TOKEN}`,
      ]);
    const addresses = Deno.networkInterfaces().filter((i) => i.family === "IPv4");
    assert.ok(addresses.length > 0);
    for (const { address } of addresses) {
      assert.equal((await get(`${address}:${server.port}`)).status, 200, address);
    }
    assert.equal((await get(`evil.example:${server.port}`)).status, 403);
  });
  await t.step("[::1]", async () => {
    let server;
    try {
      server = gateway(configWith({ host: "::1" }), { runAgent: instantAgent() });
    } catch {
      return; // no IPv6 loopback on this machine
    }
    await using _ = server;
    const res = await fetch(`http://[::1]:${server.port}/v1/models`);
    assert.equal(res.status, 200, await res.text());
  });
});

Deno.test("browser: CORS preflights get no Access-Control-* headers", async () => {
  await using server = gateway(configWith(), { runAgent: instantAgent() });
  const preflight = (origin: string | undefined) =>
    fetch(`${server.origin}/v1/messages`, {
      method: "OPTIONS",
      headers: {
        ...(origin ? pageHeaders(origin) : {}),
        "sec-fetch-mode": "cors",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-api-key",
      },
    });
  for (const [origin, status] of [[EVIL, 403], ["http://localhost:5173", 404], [undefined, 404]]) {
    const res = await preflight(origin as string | undefined);
    assert.equal(res.status, status, `OPTIONS from ${origin}`);
    assertNoCors(res.headers, `OPTIONS from ${origin}`);
    assertErrorEnvelope(await res.text(), "anthropic", `OPTIONS from ${origin}`);
  }
  // Nor on any ordinary reply.
  for (
    const [path, init] of [
      ["/v1/models", {}],
      ["/v1/messages", {
        method: "POST",
        body: BODY,
        headers: { "content-type": "application/json" },
      }],
      ["/v1/messages", {
        method: "POST",
        body: "{",
        headers: { "content-type": "application/json" },
      }],
      ["/v1/nothing", {}],
    ] as [string, RequestInit][]
  ) {
    const res = await fetch(`${server.origin}${path}`, {
      ...init,
      headers: { ...init.headers as Record<string, string>, origin: "http://localhost:5173" },
    });
    await res.body?.cancel();
    assertNoCors(res.headers, `${init.method ?? "GET"} ${path}`);
  }
});
