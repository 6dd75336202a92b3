/**
 * The status surface over HTTP: /health without auth (ok and version only), the status document
 * and its SSE stream behind the gateway's auth, a session looked up by the host's session id,
 * and who may load the dashboard page.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { FakeClock } from "../support/fake_clock.ts";
import { secrets } from "../../src/base/redact.ts";
import { startServer } from "../../src/server/wiring.ts";
import { createApp } from "../../src/server/app.ts";
import {
  EVENTS_MIN_GAP_MS,
  mountPublicStatusRoutes,
  mountStatusRoutes,
} from "../../src/status/routes.ts";
import { hostSessionKey } from "../../src/status/session_lookup.ts";
import { StatusStore } from "../../src/status/store.ts";
import type { StatusDocument } from "../../src/status/types.ts";
import { VERSION } from "../../src/base/version.ts";
import { configOf } from "../support/test_config.ts";
import { byAgent, fakeAgents, gate } from "../support/scripted_agents.ts";
import { eventually, within } from "../support/wait.ts";

const TOKEN = "status-T0ken-secret";
const AUTH = { authorization: `Bearer ${TOKEN}` };

function messagesBody(text: string) {
  return JSON.stringify({
    model: "claude-opus-5-5",
    max_tokens: 100,
    messages: [{ role: "user", content: text }],
  });
}

Deno.test("status API: /health needs no token and tells only ok and the version", async () => {
  const config = configOf({
    port: 0,
    token: TOKEN,
    defaultAgents: [{ runner: "claude", model: "m" }],
  });
  const server = startServer(config, { runAgent: fakeAgents(() => ({ text: "x" })).runAgent });
  try {
    const res = await fetch(`${server.origin}/health`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true, version: VERSION });
    const status = await fetch(`${server.origin}/v1/council/status`);
    assert.equal(status.status, 401, "the status API is behind the token");
    await status.body?.cancel();
    const events = await fetch(`${server.origin}/v1/council/events`);
    assert.equal(events.status, 401, "so is its stream");
    await events.body?.cancel();
    const head = await fetch(`${server.origin}/health`, { method: "HEAD", headers: AUTH });
    assert.equal(head.status, 404, "GET only");
  } finally {
    await server.shutdown();
  }
});

Deno.test("status API: a running turn, then the finished one, per-agent figures and spend; by the host's session id", async () => {
  const release = gate();
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "from claude", usage: { costUsd: 0.03 } },
    "codex:child": {
      gate: release.promise,
      text: "from codex",
      earlyUsage: { inputTokens: 7, outputTokens: 3 },
    },
    "claude:synth": { text: "combined", usage: { costUsd: 0.01 } },
  }));
  const config = configOf({
    port: 0,
    token: TOKEN,
    fanOutPolicy: "always",
    defaultAgents: [{ runner: "claude", model: "opus" }, { runner: "codex", model: "gpt-5.5" }],
  });
  const server = startServer(config, { runAgent: fake.runAgent });
  const get = async (query = "") => {
    const res = await fetch(`${server.origin}/v1/council/status${query}`, { headers: AUTH });
    assert.equal(res.status, 200);
    return await res.json() as StatusDocument;
  };
  try {
    const before = await get();
    assert.equal(before.version, VERSION);
    assert.deepEqual(before.live, []);
    assert.deepEqual(before.agents.map((a) => [a.agent, a.calls]), [["claude", 0], ["codex", 0]]);

    const hostSession = "3f1c2b9e-session-of-claude-code";
    const turn = fetch(`${server.origin}/v1/messages`, {
      method: "POST",
      headers: {
        ...AUTH,
        "content-type": "application/json",
        "x-claude-code-session-id": hostSession,
      },
      body: messagesBody("Explain the build"),
    });
    const live = await within(
      eventually(async () => {
        const doc = await get();
        return doc.live[0]?.calls.some((c) => c.label === "claude" && c.state === "done") && doc;
      }, "claude done, codex running"),
      "live turn",
    );
    const [running] = live.live;
    assert.equal(running.decision?.kind, "fanout");
    assert.equal(running.calls.find((c) => c.label === "codex")?.state, "running");
    assert.equal(running.calls.find((c) => c.label === "codex")?.tokens, 10);
    assert.ok(running.elapsedMs >= 0);

    // The session as Claude Code's status line asks for it: by the host's session id (the
    // x-claude-code-session-id the turn carried), or by key; an id of no session gives null.
    const byHostId = await get(`?session=${hostSession}`);
    assert.equal(byHostId.session?.live?.turn, running.turn);
    assert.equal(byHostId.session?.session, running.session);
    assert.equal((await get(`?session=${running.session}`)).session?.live?.turn, running.turn);
    assert.equal((await get("?session=another-conversation")).session, null);

    release.open();
    const reply = await turn;
    assert.equal(reply.status, 200);
    await reply.body?.cancel();
    const after = await get();
    assert.deepEqual(after.live, []);
    assert.equal(after.recent[0].turn, running.turn);
    assert.equal(after.recent[0].usd, 0.03 + 0.01 + 0.01);
    assert.equal(after.spend.usd, after.recent[0].usd);
    assert.equal(after.spend.turns, 1);
    const claude = after.agents.find((a) => a.agent === "claude")!;
    assert.equal(claude.calls, 2, "child and synthesis");
    assert.equal(claude.failures, 0);
    assert.equal(claude.medianMs, 1000);
  } finally {
    release.open();
    await server.shutdown();
  }
});

Deno.test("status API: ?session= also takes the host's session id (the key the council derives from it)", async () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  const key = await hostSessionKey("cc-session-1");
  store.turnStarted({
    turnId: "t1",
    sessionKey: key,
    model: "m",
    kind: "answer",
    continuation: false,
    startedAt: clock.now(),
  });
  const app = new Hono();
  const deps = {
    store,
    info: () => ({ version: "1", startedAt: 0, configPath: null }),
    authOn: () => false,
  };
  mountStatusRoutes(app, deps);
  const res = await app.request("/v1/council/status?session=cc-session-1");
  const doc = await res.json() as StatusDocument;
  assert.equal(doc.session?.session, key);
  assert.equal(doc.session?.live?.turn, "t1");
});

async function readFrames(
  res: Response,
  count: number,
): Promise<{ event: string; data: StatusDocument }[]> {
  const frames: { event: string; data: StatusDocument }[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (frames.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? "";
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? "null";
      if (event === "status") frames.push({ event, data: JSON.parse(data) });
    }
  }
  await reader.cancel();
  return frames;
}

Deno.test("status API: the SSE stream sends the document at once, then after a change", async () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  const app = new Hono();
  mountStatusRoutes(app, {
    store,
    info: () => ({ version: "1", startedAt: 0, configPath: "/c.yaml" }),
    authOn: () => false,
    clock,
  });
  const res = await app.request("/v1/council/events");
  assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const frames = readFrames(res, 2);
  store.turnStarted({
    turnId: "t9",
    sessionKey: "s",
    model: "m",
    kind: "answer",
    continuation: false,
    startedAt: 0,
  });
  clock.advance(EVENTS_MIN_GAP_MS);
  const [first, second] = await within(frames, "two status frames");
  assert.equal(first.data.configPath, "/c.yaml");
  assert.equal(second.data.live[0].turn, "t9");
});

function dashboardApp(token?: string) {
  const config = configOf({ token, defaultAgents: [{ runner: "claude", model: "m" }] });
  const store = new StatusStore(new FakeClock());
  return createApp({
    config,
    messages: (c) => c.json({}),
    responses: (c) => c.json({}),
    status: {
      store,
      info: () => ({ version: VERSION, startedAt: 0, configPath: null }),
      authOn: () => Boolean(token),
    },
  });
}

const peer = (hostname: string) => ({
  info: { remoteAddr: { hostname, port: 5, transport: "tcp" } },
});

Deno.test("dashboard: without a token only this machine gets the page; with one, the page asks for it", async () => {
  const open = dashboardApp();
  const local = await open.request("/", {}, peer("127.0.0.1"));
  assert.equal(local.status, 200);
  assert.match(local.headers.get("content-type") ?? "", /^text\/html/);
  const html = await local.text();
  assert.match(html, /data-auth="off"/);
  assert.match(local.headers.get("content-security-policy") ?? "", /default-src 'none'/);
  assert.equal((await open.request("/", {}, peer("::1"))).status, 200);
  const remote = await open.request("/", {}, peer("192.168.1.20"));
  assert.equal(remote.status, 403);
  assert.match((await remote.json()).error.message, /only to this machine/);

  const locked = dashboardApp(TOKEN);
  const page = await locked.request("/", {}, peer("192.168.1.20"));
  assert.equal(page.status, 200, "the page itself carries no data");
  const text = await page.text();
  assert.match(text, /data-auth="on"/);
  assert.ok(!text.includes(TOKEN));
  const status = await locked.request("/v1/council/status", {}, peer("127.0.0.1"));
  assert.equal(status.status, 401, "the data needs the token, from anywhere");
  const ok = await locked.request("/v1/council/status", { headers: AUTH }, peer("127.0.0.1"));
  assert.equal(ok.status, 200);
});

Deno.test("dashboard: one self-contained page: no external URL, CSP allows only its own inline code", async () => {
  const res = await dashboardApp().request("/", {}, peer("127.0.0.1"));
  const html = await res.text();
  const csp = res.headers.get("content-security-policy")!;
  assert.doesNotMatch(html, /(src|href)=["']?(https?:)?\/\//i, "nothing loaded from elsewhere");
  assert.doesNotMatch(html, /<(script|link)[^>]+(src|href)=/i, "no external script or stylesheet");
  for (const directive of ["connect-src 'self'", "form-action 'none'", "frame-ancestors 'none'"]) {
    assert.ok(csp.includes(directive), directive);
  }
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  // The token field has no name: even a form submitted without the script sends nothing.
  assert.match(html, /<input id="token" type="password"/);
  assert.doesNotMatch(html, /<input[^>]*\bname=/);
});

Deno.test("status routes: HEAD and other methods fall through to the gateway's 404", async () => {
  const app = new Hono();
  mountPublicStatusRoutes(app, {
    store: new StatusStore(new FakeClock()),
    info: () => ({ version: "1", startedAt: 0, configPath: null }),
    authOn: () => false,
  });
  app.notFound((c) => c.json({ nope: true }, 404));
  assert.equal((await app.request("/health", { method: "HEAD" })).status, 404);
  assert.equal((await app.request("/health", { method: "POST" })).status, 404);
});

Deno.test("status API: secrets the gateway knows are masked in what agents did", async () => {
  const secret = "sk-status-secret-0123456789";
  secrets.add(secret);
  const store = new StatusStore(new FakeClock());
  store.turnStarted({
    turnId: "t1",
    sessionKey: "s",
    model: "m",
    kind: "answer",
    continuation: false,
    startedAt: 0,
  });
  store.callStarted("t1", {
    label: "codex",
    agent: "codex",
    role: "child",
    model: "m",
    startedAt: 0,
  })
    .event({ type: "activity", agent: "codex", text: `$ curl -H "x-api-key: ${secret}" …` });
  const app = new Hono();
  mountStatusRoutes(app, {
    store,
    info: () => ({ version: "1", startedAt: 0, configPath: null }),
    authOn: () => false,
  });
  const text = await (await app.request("/v1/council/status")).text();
  assert.ok(!text.includes(secret));
  assert.match(text, /x-api-key: \*\*\*/);
  const frames = await readFrames(await app.request("/v1/council/events"), 1);
  assert.ok(!JSON.stringify(frames).includes(secret));
});

Deno.test("status API: /v1/council/team is the team's status, 503 while its database is away", async () => {
  const base = {
    store: new StatusStore(new FakeClock()),
    info: () => ({ version: "1", startedAt: 0, configPath: null }),
    authOn: () => false,
  };
  const alone = new Hono();
  mountStatusRoutes(alone, base);
  assert.deepEqual(await (await alone.request("/v1/council/team")).json(), {
    replicas: [],
    totals: null,
    keys: [],
  });
  const doc = {
    replicas: [],
    totals: { replicas: 2, liveTurns: 3 },
    keys: [],
    health: [],
  };
  let up = true;
  const team = new Hono();
  mountStatusRoutes(team, {
    ...base,
    team: () => up ? Promise.resolve(doc) : Promise.reject(new Error("connection refused")),
  });
  assert.deepEqual(await (await team.request("/v1/council/team")).json(), doc);
  up = false;
  const down = await team.request("/v1/council/team");
  assert.equal(down.status, 503);
  assert.match((await down.json()).error.message, /database is unreachable: connection refused/);
});
