/**
 * Secrets, end to end (issue 9 §5): the real gateway process (`main.ts serve`, debug logs, text
 * and JSON) started from a shell that holds the gateway token under every name a user may have
 * exported it (SVC_GATEWAY_TOKEN, the `connect` exports) and provider keys, serving turns whose
 * children print their whole environment (to stdout and stderr, so into answers, interleaved
 * progress and debug logs). The token never reaches a child, a log line, a progress line or an
 * error reply; provider keys reach a child only with passApiKeys, and never a log line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger, resetSync } from "@logtape/logtape";
import fc from "fast-check";
import { childEnv } from "../../src/agents/child_env.ts";
import { FakeClock } from "../support/fake_clock.ts";
import { createCouncil } from "../../src/council/turn/turn.ts";
import { maskSecret, setupLogging } from "../../src/base/log.ts";
import { SecretRegistry } from "../../src/base/redact.ts";
import {
  ANTHROPIC_CREDENTIALS,
  hostCredentials,
  PERSON_KEY_PREFIX,
} from "../../src/protocol/credentials.ts";
import { KEY_PREFIX } from "../../src/store/key_rows.ts";
import { spawnGateway } from "../support/gateway_process.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { collect, fakeAgents, gate, testConfig, testRequest } from "../support/scripted_agents.ts";
import { eventually } from "../support/wait.ts";

const never = new AbortController().signal;

const TOKEN = "gw-Secret-Token-4b8e2f7a91";
/** Provider keys in the gateway's environment. */
const ENV_KEYS: Record<string, string> = {
  ANTHROPIC_API_KEY: "sk-ant-env-key-0f1e2d3c",
  OPENAI_API_KEY: "sk-proj-env-key-a1b2c3d4",
  CODEX_API_KEY: "codex-env-key-5e6f7a8b",
  GEMINI_API_KEY: "gemini-env-key-9c0d1e2f",
  CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat-env-3a4b5c6d",
};
/** A provider key the host presents in a request (Claude Code with ANTHROPIC_API_KEY set). */
const HEADER_KEY = "sk-ant-header-key-7e8f9a0b";

/** The shell the gateway starts from: the token also under the names `connect` exports. */
const GATEWAY_ENV = {
  SVC_GATEWAY_TOKEN: TOKEN,
  COUNCIL_GATEWAY_TOKEN: TOKEN,
  ANTHROPIC_AUTH_TOKEN: TOKEN,
  ...ENV_KEYS,
};

const PROVIDER_SECRETS = [...Object.values(ENV_KEYS), HEADER_KEY];

function found(text: string, secrets: string[]): string[] {
  return secrets.filter((secret) => text.includes(secret));
}

/** An agent that prints its environment on stdout (its answer) and on stderr. */
async function envPrinter(dir: string): Promise<string> {
  const path = join(dir, "env-printer");
  await Deno.writeTextFile(path, "#!/bin/sh\ncat >/dev/null\nenv\nenv >&2\n");
  await Deno.chmod(path, 0o755);
  return path;
}

async function scenario(options: { json: boolean; passApiKeys: boolean }) {
  const dir = await Deno.makeTempDir({ prefix: "cg-secrets-" });
  try {
    const log = join(dir, "fake.log");
    const claude = fakeAgent("claude", { modes: ["dump-env"], log, logEnv: true }, {
      name: "claude",
    });
    const printer = {
      name: "printer",
      runner: "command",
      model: "m",
      command: await envPrinter(dir),
    };
    const gateway = await spawnGateway(dir, {
      logLevel: "debug",
      logJson: options.json,
      passApiKeys: options.passApiKeys,
      progressDetail: "interleaved",
      fanOutPolicy: "always",
      defaultAgents: [claude, printer],
    }, GATEWAY_ENV);
    const replies: string[] = [];
    try {
      const post = async (path: string, headers: Record<string, string>, body: unknown) => {
        const res = await fetch(`${gateway.origin}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        replies.push(text);
        return { status: res.status, text };
      };
      const ask = (content: string, stream: boolean) => ({
        model: "claude-opus-4-8",
        max_tokens: 100,
        stream,
        messages: [{ role: "user", content }],
      });
      // Claude Code's shape: the token as bearer, a provider key as x-api-key.
      const host = { authorization: `Bearer ${TOKEN}`, "x-api-key": HEADER_KEY };
      const streamed = await post("/v1/messages", host, ask("print your environment", true));
      assert.equal(streamed.status, 200, streamed.text);
      assert.match(streamed.text, /event: message_stop/);
      const plain = await post("/v1/messages", host, ask("again, as JSON", false));
      assert.equal(plain.status, 200, plain.text);
      const codex = await post("/v1/responses", { authorization: `Bearer ${TOKEN}` }, {
        model: "gpt-5.5",
        input: "and over Responses",
        stream: true,
      });
      assert.equal(codex.status, 200, codex.text);

      // Wrong tokens, the right one's neighbours included, are refused without an echo.
      for (
        const headers of [
          { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
          { authorization: `Bearer ${TOKEN}x` },
          { "x-api-key": `${TOKEN} ${TOKEN}` },
          { authorization: `Basic ${TOKEN}` },
        ] as Record<string, string>[]
      ) {
        const denied = await post("/v1/messages", headers, ask("hi", false));
        assert.equal(denied.status, 401);
        assert.deepEqual(JSON.parse(denied.text), {
          type: "error",
          error: { type: "authentication_error", message: "unauthorized" },
        });
      }
      // Bad requests carrying the token: their errors do not show it either.
      const bad = await post("/v1/messages", host, { model: TOKEN.repeat(30), messages: [] });
      assert.equal(bad.status, 400);
      const bad2 = await post("/v1/responses", { authorization: `Bearer ${TOKEN}` }, { input: 1 });
      assert.equal(bad2.status, 400);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
    return { lines: gateway.lines(), replies, children: await readFakeLog(log) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("secrets: passApiKeys off — no child, log line, progress line or reply holds a secret", async () => {
  const { lines, replies, children } = await scenario({ json: false, passApiKeys: false });
  const log = lines.join("\n");
  // The children did print their environment: into answers, progress and the debug log.
  assert.match(replies[0], /printer: PATH=/, "interleaved progress shows the printer's env");
  assert.ok(lines.some((l) => l.includes("stderr: PATH=")), "debug log shows child stderr");
  assert.ok(children.length >= 2 && children.every((c) => c.env?.PATH));

  assert.deepEqual(found(log, [TOKEN, ...PROVIDER_SECRETS]), [], "secrets in the log");
  for (const reply of replies) {
    assert.deepEqual(found(reply, [TOKEN, ...PROVIDER_SECRETS]), [], "secrets in a reply");
  }
  for (const child of children) {
    const env = JSON.stringify(child.env);
    assert.deepEqual(found(env, [TOKEN, ...PROVIDER_SECRETS]), [], "secrets in a child's env");
  }
});

Deno.test("secrets: passApiKeys on — children get provider keys, never the token; logs get none", async () => {
  const { lines, replies, children } = await scenario({ json: true, passApiKeys: true });
  for (const line of lines) JSON.parse(line); // JSON lines only
  assert.deepEqual(found(lines.join("\n"), [TOKEN, ...PROVIDER_SECRETS]), [], "secrets in the log");

  for (const child of children) {
    const env = child.env ?? {};
    assert.deepEqual(found(JSON.stringify(env), [TOKEN]), [], "the token in a child's env");
    // The gateway's own keys, or (Messages turns) the key the host presented, which wins.
    assert.ok([HEADER_KEY, ENV_KEYS.ANTHROPIC_API_KEY].includes(env.ANTHROPIC_API_KEY));
    assert.equal(env.OPENAI_API_KEY, ENV_KEYS.OPENAI_API_KEY);
    assert.equal(
      env.ANTHROPIC_AUTH_TOKEN,
      undefined,
      "the token exported as a provider credential",
    );
  }
  assert.ok(children.some((child) => child.env?.ANTHROPIC_API_KEY === HEADER_KEY));
  for (const reply of replies) {
    assert.deepEqual(found(reply, [TOKEN]), [], "the token in a reply");
  }
});

Deno.test("secrets: childEnv withholds the token under any name, the connect exports by name", () => {
  const env = childEnv({
    base: {
      PATH: "/bin",
      COUNCIL_GATEWAY_TOKEN: "an-older-gateway-token",
      ANTHROPIC_AUTH_TOKEN: TOKEN,
      MY_OWN_VARIABLE: TOKEN,
      OPENAI_API_KEY: ENV_KEYS.OPENAI_API_KEY,
    },
    passApiKeys: true,
    selfOrigins: [],
    withheld: [TOKEN, ""],
    hostCredentials: { ANTHROPIC_API_KEY: TOKEN, GEMINI_API_KEY: HEADER_KEY },
    agentEnv: { EXPLICIT: "configured" },
  });
  assert.deepEqual(found(JSON.stringify(env), [TOKEN, "an-older-gateway-token"]), []);
  assert.equal(env.OPENAI_API_KEY, ENV_KEYS.OPENAI_API_KEY);
  assert.equal(env.GEMINI_API_KEY, HEADER_KEY);
  assert.equal(env.EXPLICIT, "configured");
  assert.equal(env.PATH, "/bin");
});

Deno.test("secrets: a provider key a request forwards is masked in every later log line", () => {
  for (const json of [false, true]) {
    const lines: string[] = [];
    setupLogging({ level: "debug", json, write: (line) => lines.push(line) });
    try {
      const key = `sk-ant-request-key-${json}`;
      const headers = new Headers({ "x-api-key": key, authorization: `Bearer ${TOKEN}` });
      const options = { passApiKeys: true, gatewayToken: TOKEN };
      assert.deepEqual(hostCredentials(headers, ANTHROPIC_CREDENTIALS, options), {
        ANTHROPIC_API_KEY: key,
      });
      const log = getLogger(["council-gateway", "test"]);
      log.debug("child said {text}", { text: `my key is ${key}`, key });
      maskSecret("abc"); // too short to mask: it would mangle ordinary words
      log.info("abc stays");
      assert.equal(lines.length, 2);
      assert.ok(!lines[0].includes(key), lines[0]);
      assert.match(lines[0], /my key is \*\*\*/);
      assert.match(lines[1], /abc stays/);
    } finally {
      resetSync();
    }
  }
});

/** An agent whose stderr echoes the token and the provider keys it was given, then fails. */
async function leaker(dir: string): Promise<string> {
  const path = join(dir, "leaker");
  await Deno.writeTextFile(
    path,
    "#!/bin/sh\ncat >/dev/null\n" +
      `echo "401: token ${TOKEN} rejected; key $ANTHROPIC_API_KEY / $OPENAI_API_KEY" >&2\nexit 3\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

Deno.test("secrets: a child's stderr echoing the token or a key is masked in progress, the all-failed answer and the log", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cg-leak-" });
  try {
    const gateway = await spawnGateway(dir, {
      logLevel: "debug",
      passApiKeys: true,
      fanOutPolicy: "never",
      defaultAgents: [{
        name: "leaker",
        runner: "command",
        model: "m",
        command: await leaker(dir),
      }],
    }, GATEWAY_ENV);
    const replies: string[] = [];
    try {
      const host = { authorization: `Bearer ${TOKEN}`, "x-api-key": HEADER_KEY };
      for (const stream of [true, false]) {
        const res = await fetch(`${gateway.origin}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", ...host },
          body: JSON.stringify({
            model: "claude-opus-4-8",
            max_tokens: 100,
            stream,
            messages: [{ role: "user", content: "hello" }],
          }),
        });
        replies.push(await res.text());
      }
      const codex = await fetch(`${gateway.origin}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ model: "gpt-5.5", input: "hello", stream: true }),
      });
      replies.push(await codex.text());
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
    // The failure did reach progress and the answers, masked.
    assert.match(
      replies[0],
      /leaker: failed after .*401: token \*\*\* rejected; key \*\*\* \/ \*\*\*/,
    );
    assert.match(replies[1], /no agent returned a usable reply.*401: token \*\*\* rejected/s);
    assert.match(replies[2], /401: token \*\*\* rejected/);
    for (const reply of replies) {
      assert.deepEqual(found(reply, [TOKEN, ...PROVIDER_SECRETS]), [], "a secret in a reply");
    }
    assert.deepEqual(found(gateway.lines().join("\n"), [TOKEN, ...PROVIDER_SECRETS]), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("secrets: the scrub drops variables whose value contains the token, or (passApiKeys off) a key", () => {
  const base = {
    PATH: "/bin",
    PROXY_URL: `https://user:${TOKEN}@proxy.example`,
    SHELL_HISTORY_LINE: `curl -H "x-api-key: ${ENV_KEYS.OPENAI_API_KEY}"`,
    OPENAI_API_KEY: ENV_KEYS.OPENAI_API_KEY,
    SHORT: "xx-ab-xx",
  };
  const off = childEnv({ base, passApiKeys: false, selfOrigins: [], withheld: [TOKEN, "ab"] });
  assert.deepEqual(Object.keys(off).filter((k) => k in base).sort(), ["PATH", "SHORT"]);
  const on = childEnv({ base, passApiKeys: true, selfOrigins: [], withheld: [TOKEN] });
  assert.equal(on.PROXY_URL, undefined, "the token, under any name, in any part of a value");
  assert.equal(on.OPENAI_API_KEY, ENV_KEYS.OPENAI_API_KEY);
  assert.equal(on.SHELL_HISTORY_LINE, base.SHELL_HISTORY_LINE);
  // A forwarded credential that carries the token is not forwarded.
  const forwarded = childEnv({
    base: {},
    passApiKeys: true,
    selfOrigins: [],
    withheld: [TOKEN],
    hostCredentials: { ANTHROPIC_API_KEY: `Bearer ${TOKEN}` },
  });
  assert.equal(forwarded.ANTHROPIC_API_KEY, undefined);
});

Deno.test("secrets: a key in use by a running turn is never forgotten, however many others are learnt", async () => {
  const registry = new SecretRegistry();
  const release = registry.hold(["sk-live-key-in-use-1234"]);
  for (let i = 0; i < 500; i++) registry.learn(`sk-other-key-${i}-abcdef`);
  assert.equal(registry.redact("key sk-live-key-in-use-1234"), "key ***");
  assert.equal(registry.redact("sk-other-key-0-abcdef"), "sk-other-key-0-abcdef", "bounded");
  assert.equal(registry.redact("sk-other-key-499-abcdef"), "***");
  release();
  assert.equal(registry.redact("key sk-live-key-in-use-1234"), "key ***", "then kept as recent");
  for (let i = 0; i < 64; i++) registry.learn(`sk-newer-key-${i}-abcdef`);
  assert.equal(registry.redact("sk-live-key-in-use-1234"), "sk-live-key-in-use-1234");

  // Through a council turn: the request's key stays masked while 500 others come and go.
  const key = "sk-ant-turn-key-5f6e7d8c";
  const open = gate();
  const fake = fakeAgents(() => ({
    ok: false,
    gate: open.promise,
    error: `claude: exit code 1: invalid x-api-key ${key}`,
  }));
  const lines: string[] = [];
  setupLogging({ level: "debug", json: false, write: (line) => lines.push(line) });
  try {
    const council = createCouncil({
      config: testConfig({ fanOutPolicy: "never", passApiKeys: true }),
      runAgent: fake.runAgent,
      clock: new FakeClock(),
    });
    const turn = collect(
      council.runTurn(testRequest({ hostCredentials: { ANTHROPIC_API_KEY: key } }), never),
    );
    await eventually(() => fake.active > 0, "the agent call running");
    for (let i = 0; i < 500; i++) maskSecret(`sk-ant-other-${i}-0a1b2c3d`);
    open.open();
    const log = await turn;
    const shown = [...log.progress, (log.outcome as { text: string }).text, ...lines].join("\n");
    assert.match(shown, /invalid x-api-key \*\*\*/);
    assert.ok(!shown.includes(key), shown);
  } finally {
    resetSync();
  }
});

Deno.test("secrets: a streamed answer is masked however the secret is split across deltas", () => {
  const registry = new SecretRegistry();
  registry.add("sk-abcdef");
  registry.add("sk-abcdef-longer");
  registry.add("cdef-tail");
  // Every way to cut a text where one secret ends inside another's possible start.
  for (const text of ["x sk-abcdef-tail y", "sk-abcdef-longer!", "sk-abcdef-long"]) {
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        const stream = registry.stream();
        const out = [text.slice(0, i), text.slice(i, j), text.slice(j)].map((p) => stream.push(p))
          .join("") + stream.flush();
        assert.equal(out, registry.redact(text), `${text} cut at ${i}, ${j}`);
      }
    }
  }
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom("sk-", "abc", "def", "-longer", "-tail", "c", "x", " ", "***")),
      fc.array(fc.nat(40)),
      (words, cuts) => {
        const text = words.join("");
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const stream = registry.stream();
        let out = "";
        let from = 0;
        for (const point of [...points, text.length]) {
          out += stream.push(text.slice(from, point));
          from = point;
        }
        out += stream.flush();
        assert.equal(out, registry.redact(text));
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("secrets: a team's person key is never forwarded to children as a provider key", () => {
  const person = `${PERSON_KEY_PREFIX}alice-key-0123456789`;
  const options = { passApiKeys: true, gatewayToken: TOKEN };
  const presented: Record<string, string>[] = [
    { "x-api-key": person },
    { authorization: `Bearer ${person}` },
  ];
  for (const headers of presented) {
    assert.equal(hostCredentials(new Headers(headers), ANTHROPIC_CREDENTIALS, options), undefined);
  }
  assert.equal(PERSON_KEY_PREFIX, KEY_PREFIX, "the prefix the store gives its keys");
});
