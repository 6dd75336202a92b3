/**
 * A WebSocket upgrade on /v1/responses is answered 426 in OpenAI's error shape, so Codex falls
 * back to HTTP on its first try; other GETs stay 404 and auth still comes first.
 */
import assert from "node:assert/strict";
import { createApp } from "../../src/server/app.ts";
import { configOf } from "../support/test_config.ts";

function app(env: Record<string, string> = {}) {
  const none = () => new Response(null, { status: 500 });
  const config = { ...configOf({}), token: env.TOKEN ?? "" };
  return createApp({ config, messages: none, responses: none });
}

const UPGRADE = {
  upgrade: "websocket",
  connection: "Upgrade",
  "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
  "sec-websocket-version": "13",
};

Deno.test("websocket: an upgrade on /v1/responses gets 426 in OpenAI's error shape", async () => {
  const res = await app().request("/v1/responses", { headers: UPGRADE });
  assert.equal(res.status, 426);
  const body = await res.json();
  assert.equal(body.error.type, "invalid_request_error");
  assert.equal(body.error.code, "websocket_not_served");
  assert.match(body.error.message, /POST \/v1\/responses/);
});

Deno.test("websocket: a plain GET of /v1/responses and an upgrade elsewhere stay 404", async () => {
  assert.equal((await app().request("/v1/responses")).status, 404);
  assert.equal((await app().request("/v1/messages", { headers: UPGRADE })).status, 404);
});

Deno.test("websocket: with a token, an unauthenticated upgrade is 401 before 426", async () => {
  const gated = app({ TOKEN: "tok-123" });
  assert.equal((await gated.request("/v1/responses", { headers: UPGRADE })).status, 401);
  const ok = await gated.request("/v1/responses", {
    headers: { ...UPGRADE, authorization: "Bearer tok-123" },
  });
  assert.equal(ok.status, 426);
});
