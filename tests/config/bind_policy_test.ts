import assert from "node:assert/strict";
import { bindPolicyProblem } from "../../src/config/bind_policy.ts";

Deno.test("bind policy: a non-loopback bind needs a token or an explicit opt-in", () => {
  const remote = { host: "0.0.0.0", allowUnauthenticatedRemote: false };
  assert.match(bindPolicyProblem(remote) ?? "", /^config: host: "0.0.0.0" is reachable/);
  assert.equal(bindPolicyProblem({ ...remote, token: "0123456789abcdef" }), null);
  assert.equal(bindPolicyProblem({ ...remote, allowUnauthenticatedRemote: true }), null);
  assert.equal(bindPolicyProblem({ ...remote, host: "127.0.0.1" }), null);
});

Deno.test("bind policy: a non-loopback bind refuses a token under 16 characters; loopback takes any", () => {
  const remote = { host: "192.168.1.2", allowUnauthenticatedRemote: false };
  for (const token of ["t", "ab", "0123456789abcde", "ééééééééééééééé"]) {
    assert.equal(
      bindPolicyProblem({ ...remote, token }),
      `config: host: "192.168.1.2" is reachable from other machines and the token ` +
        `(SVC_GATEWAY_TOKEN) has ${[...token].length} characters; a remote bind needs at least ` +
        "16 (e.g. `openssl rand -hex 16`)",
      token,
    );
    // An explicit opt-in to no auth does not make a weak token acceptable.
    assert.notEqual(
      bindPolicyProblem({ ...remote, token, allowUnauthenticatedRemote: true }),
      null,
    );
    assert.equal(bindPolicyProblem({ ...remote, token, host: "127.0.0.1" }), null);
  }
  assert.equal(bindPolicyProblem({ ...remote, token: "é".repeat(16) }), null);
});
