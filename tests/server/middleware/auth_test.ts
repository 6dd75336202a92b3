import assert from "node:assert/strict";
import { createTokenCheck, presentedTokens } from "../../../src/server/middleware/auth.ts";
import { isLoopbackHost } from "../../../src/base/origins.ts";

Deno.test("auth: off without a token", () => {
  assert.equal(createTokenCheck(undefined)(new Headers()), true);
  assert.equal(createTokenCheck("")(new Headers()), true);
});

Deno.test("auth: bearer or x-api-key must equal the token", () => {
  const check = createTokenCheck("s3cret-token");
  const ok = (headers: Record<string, string>) => check(new Headers(headers));
  assert.equal(ok({ authorization: "Bearer s3cret-token" }), true);
  assert.equal(ok({ authorization: "bearer s3cret-token" }), true);
  assert.equal(ok({ "x-api-key": "s3cret-token" }), true);
  assert.equal(ok({}), false);
  assert.equal(ok({ authorization: "Bearer wrong" }), false);
  assert.equal(ok({ authorization: "Bearer s3cret" }), false, "a prefix is not the token");
  assert.equal(ok({ authorization: "Bearer s3cret-token-and-more" }), false);
  assert.equal(ok({ authorization: "Basic s3cret-token" }), false);
  assert.equal(ok({ authorization: "s3cret-token" }), false);
  assert.equal(ok({ "x-api-key": "" }), false);
  assert.equal(ok({ authorization: "Bearer " }), false);
  // Either header may carry it.
  assert.equal(ok({ authorization: "Bearer wrong", "x-api-key": "s3cret-token" }), true);
});

Deno.test("auth: presentedTokens reads both headers", () => {
  assert.deepEqual(
    presentedTokens(new Headers({ authorization: "Bearer  a  ", "x-api-key": "b" })),
    ["a", "b"],
  );
  assert.deepEqual(presentedTokens(new Headers()), []);
});

Deno.test("auth: loopback hosts", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"]) {
    assert.equal(isLoopbackHost(host), true, host);
  }
  for (const host of ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1", "example.com", "128.0.0.1"]) {
    assert.equal(isLoopbackHost(host), false, host);
  }
});
