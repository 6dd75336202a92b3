import assert from "node:assert/strict";
import { childEnv, pointsAtSelf } from "../../src/agents/child_env.ts";
import { endpointKey } from "../../src/base/origins.ts";

const SELF = ["http://127.0.0.1:6767"];

Deno.test("endpointKey folds every loopback spelling and fills default ports", () => {
  for (const url of ["http://localhost:6767", "http://127.0.0.1:6767/v1", "http://[::1]:6767"]) {
    assert.equal(endpointKey(url), "loopback:6767", url);
  }
  assert.equal(endpointKey("http://0.0.0.0:6767"), "loopback:6767");
  assert.equal(endpointKey("https://api.anthropic.com"), "api.anthropic.com:443");
  assert.equal(endpointKey("http://example.com"), "example.com:80");
  assert.equal(endpointKey("not a url"), undefined);
});

Deno.test("pointsAtSelf compares host and port, for URLs and scheme-less base URLs", () => {
  assert.ok(pointsAtSelf("ANTHROPIC_BASE_URL", "http://localhost:6767", SELF));
  assert.ok(pointsAtSelf("OPENAI_BASE_URL", "http://[::1]:6767/v1", SELF));
  assert.ok(pointsAtSelf("OPENAI_API_BASE", "127.0.0.1:6767", SELF));
  assert.ok(pointsAtSelf("HTTPS_PROXY", "http://127.0.0.1:6767", SELF), "any URL at us");
  assert.ok(!pointsAtSelf("ANTHROPIC_BASE_URL", "http://127.0.0.1:6768", SELF));
  assert.ok(!pointsAtSelf("ANTHROPIC_BASE_URL", "https://api.anthropic.com", SELF));
  assert.ok(!pointsAtSelf("SOME_NAME", "127.0.0.1:6767", SELF), "scheme-less only for base URLs");
  assert.ok(!pointsAtSelf("ANTHROPIC_BASE_URL", "http://127.0.0.1:6767", []));
});

const BASE = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  SVC_GATEWAY_TOKEN: "gw-secret",
  SVC_LOG_LEVEL: "debug",
  ANTHROPIC_API_KEY: "sk-ant-host",
  ANTHROPIC_AUTH_TOKEN: "tok",
  CLAUDE_CODE_OAUTH_TOKEN: "oauth",
  OPENAI_API_KEY: "sk-openai",
  CODEX_API_KEY: "codex",
  GEMINI_API_KEY: "gem",
  GOOGLE_API_KEY: "goog",
  CLAUDECODE: "1",
  CLAUDE_CODE_ENTRYPOINT: "cli",
  CLAUDE_CODE_SESSION_ID: "sess",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  CODEX_SANDBOX: "seatbelt",
  GEMINI_CLI: "1",
  ANTHROPIC_BASE_URL: "http://localhost:6767",
  GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:6767",
  OPENAI_BASE_URL: "https://proxy.example.com/v1",
};

Deno.test("childEnv removes SVC_*, credentials, host markers and base URLs pointing at us", () => {
  const env = childEnv({ base: BASE, passApiKeys: false, selfOrigins: SELF });
  for (
    const name of [
      "SVC_GATEWAY_TOKEN",
      "SVC_LOG_LEVEL",
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "OPENAI_API_KEY",
      "CODEX_API_KEY",
      "GEMINI_API_KEY",
      "GOOGLE_API_KEY",
      "CLAUDECODE",
      "CLAUDE_CODE_ENTRYPOINT",
      "CLAUDE_CODE_SESSION_ID",
      "CODEX_SANDBOX",
      "GEMINI_CLI",
      "ANTHROPIC_BASE_URL",
      "GOOGLE_GEMINI_BASE_URL",
    ]
  ) assert.equal(env[name], undefined, name);
  assert.equal(env.PATH, "/usr/bin");
  assert.equal(env.HOME, "/home/u");
  assert.equal(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1", "settings are not markers");
  assert.equal(env.OPENAI_BASE_URL, "https://proxy.example.com/v1", "other hosts are kept");
});

Deno.test("childEnv keeps credentials and adds the host's only with passApiKeys", () => {
  const hostCredentials = { ANTHROPIC_API_KEY: "sk-ant-request" };
  const off = childEnv({ base: BASE, passApiKeys: false, selfOrigins: SELF, hostCredentials });
  assert.equal(off.ANTHROPIC_API_KEY, undefined);
  const on = childEnv({ base: BASE, passApiKeys: true, selfOrigins: SELF, hostCredentials });
  assert.equal(on.ANTHROPIC_API_KEY, "sk-ant-request", "the request's key over the gateway's");
  assert.equal(on.OPENAI_API_KEY, "sk-openai");
  assert.equal(on.SVC_GATEWAY_TOKEN, undefined, "the gateway's own token never passes");
});

Deno.test("childEnv: an HTTP agent's apiKeyEnv is a credential like the well-known ones", () => {
  const base = { ...BASE, OPENROUTER_KEY: "sk-or-v1-0a1b2c3d", COPY: "sk-or-v1-0a1b2c3d" };
  const options = { base, selfOrigins: SELF, credentialVariables: ["OPENROUTER_KEY"] };
  const off = childEnv({ ...options, passApiKeys: false });
  assert.equal(off.OPENROUTER_KEY, undefined);
  assert.equal(off.COPY, undefined, "nor under another name");
  const on = childEnv({ ...options, passApiKeys: true });
  assert.equal(on.OPENROUTER_KEY, "sk-or-v1-0a1b2c3d");
});

Deno.test("childEnv: the agent's explicit env wins, after the adapter's", () => {
  const env = childEnv({
    base: BASE,
    passApiKeys: false,
    selfOrigins: SELF,
    adapterEnv: { IS_SANDBOX: "1", HOME: "/adapter" },
    agentEnv: { ANTHROPIC_BASE_URL: "http://127.0.0.1:6767", ANTHROPIC_API_KEY: "k", HOME: "/t" },
  });
  assert.equal(env.IS_SANDBOX, "1");
  assert.equal(env.HOME, "/t");
  assert.equal(env.ANTHROPIC_BASE_URL, "http://127.0.0.1:6767");
  assert.equal(env.ANTHROPIC_API_KEY, "k");
});

Deno.test("childEnv marks every child: depth header appended to custom headers, marker variable", () => {
  const plain = childEnv({ base: {}, passApiKeys: false, selfOrigins: [] });
  assert.equal(plain.ANTHROPIC_CUSTOM_HEADERS, "x-council-depth: 1");
  assert.equal(plain.COUNCIL_GATEWAY_CHILD, "1");
  const withHeaders = childEnv({
    base: { ANTHROPIC_CUSTOM_HEADERS: "x-team: a\n" },
    passApiKeys: false,
    selfOrigins: [],
    agentEnv: {},
  });
  assert.equal(withHeaders.ANTHROPIC_CUSTOM_HEADERS, "x-team: a\nx-council-depth: 1");
  const explicit = childEnv({
    base: {},
    passApiKeys: false,
    selfOrigins: [],
    agentEnv: { ANTHROPIC_CUSTOM_HEADERS: "x-org: b", COUNCIL_GATEWAY_CHILD: "0" },
  });
  assert.equal(explicit.ANTHROPIC_CUSTOM_HEADERS, "x-org: b\nx-council-depth: 1");
  assert.equal(explicit.COUNCIL_GATEWAY_CHILD, "1");
});
