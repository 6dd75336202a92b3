import assert from "node:assert/strict";
import { apiKeyVariables } from "../../src/base/secret_variables.ts";
import { getLogger, resetSync } from "@logtape/logtape";
import {
  collectSecrets,
  createRedactor,
  type LevelName,
  moduleLogger,
  setupLogging,
} from "../../src/base/log.ts";
import { startServer } from "../../src/server/wiring.ts";
import { fakeAgents, testConfig } from "../support/scripted_agents.ts";
import { envOf } from "../support/temp_scripts.ts";

/** Configures logging into an array for the duration of fn. */
function capture(
  options: { level?: LevelName; json?: boolean; secrets?: string[] },
  fn: () => void,
): string[] {
  const lines: string[] = [];
  setupLogging({
    level: options.level ?? "debug",
    json: options.json ?? false,
    secrets: options.secrets,
    write: (line) => lines.push(line),
  });
  try {
    fn();
  } finally {
    resetSync();
  }
  return lines;
}

Deno.test("log: text lines carry timestamp, level, [turn] prefix and extra fields", () => {
  const lines = capture({}, () => {
    const log = moduleLogger("test");
    log.info("listening on {url}", { url: "http://127.0.0.1:1" });
    log.with({ turn: "ab12cd34" }).warn("child {agent} failed", { agent: "codex", code: 3 });
    log.debug("text with\nnewline", { note: "two words" });
  });
  assert.equal(lines.length, 3);
  assert.match(
    lines[0],
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}listening on http:\/\/127\.0\.0\.1:1\n$/,
  );
  assert.match(lines[1], / WARN {2}\[turn ab12cd34\] child codex failed code=3\n$/);
  // One record per line: embedded newlines are escaped.
  assert.match(lines[2], / DEBUG text with\\nnewline note="two words"\n$/);
  for (const line of lines) assert.equal(line.indexOf("\n"), line.length - 1);
});

Deno.test("log: JSON mode writes one parseable object per line with ts, level, msg, turn", () => {
  const lines = capture({ json: true }, () => {
    const log = moduleLogger("server");
    log.info("plain");
    log.with({ turn: "t1" }).error("boom {what}", {
      what: "x",
      extra: { n: 1 },
      err: new Error("e"),
    });
  });
  const records = lines.map((l) => JSON.parse(l));
  assert.deepEqual(Object.keys(records[0]).sort(), ["level", "module", "msg", "ts"]);
  assert.equal(records[0].level, "info");
  assert.equal(records[0].msg, "plain");
  assert.equal(records[0].module, "server");
  assert.ok(!Number.isNaN(Date.parse(records[0].ts)));
  assert.equal(records[1].level, "error");
  assert.equal(records[1].msg, "boom x");
  assert.equal(records[1].turn, "t1");
  assert.deepEqual(records[1].extra, { n: 1 });
  assert.equal(records[1].err, "e");
  // Template values stay available as structured fields.
  assert.equal(records[1].what, "x");
});

Deno.test("log: the level filter drops lower records; warn maps to logtape's warning", () => {
  const lines = capture({ level: "warn" }, () => {
    const log = moduleLogger("test");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
  });
  assert.deepEqual(lines.map((l) => l.split(" ")[1]), ["WARN", "ERROR"]);
});

Deno.test("log: other libraries' categories are not written", () => {
  const lines = capture({}, () => getLogger(["someone-else"]).error("not ours"));
  assert.deepEqual(lines, []);
});

Deno.test("log: secrets never reach a line, in text or JSON", () => {
  const secret = 'tok-"quoted"\\x';
  for (const json of [false, true]) {
    const lines = capture({ json, secrets: [secret, "sk-provider-123"] }, () => {
      moduleLogger("test").info("token {t} key {k}", { t: secret, k: "sk-provider-123" });
    });
    assert.equal(lines.length, 1);
    assert.ok(!lines[0].includes(secret), lines[0]);
    assert.ok(!lines[0].includes(JSON.stringify(secret).slice(1, -1)), lines[0]);
    assert.ok(!lines[0].includes("sk-provider-123"), lines[0]);
    assert.ok(lines[0].includes("***"));
    if (json) JSON.parse(lines[0]);
  }
});

Deno.test("log: collectSecrets takes the token and provider keys, skipping trivial values", () => {
  const secrets = collectSecrets(
    "gateway-token",
    envOf({ ANTHROPIC_API_KEY: "sk-ant-1", OPENAI_API_KEY: "1", HOME: "/root" }),
  );
  assert.deepEqual(secrets.sort(), ["gateway-token", "sk-ant-1"]);
  const redact = createRedactor(["abcd", "abcdef"]);
  assert.equal(redact("x abcdef y abcd"), "x *** y ***");
  assert.equal(createRedactor([])("unchanged"), "unchanged");
});

Deno.test("log: collectSecrets also takes the keys of the agents' own apiKeyEnv variables", () => {
  const variables = apiKeyVariables([
    { apiKeyEnv: "OPENROUTER_KEY" },
    { apiKeyEnv: "OPENAI_API_KEY" },
    {},
    undefined,
    { apiKeyEnv: "OPENROUTER_KEY" },
  ]);
  assert.deepEqual(variables, ["OPENROUTER_KEY"], "named once; the well-known ones are already in");
  const env = envOf({ OPENROUTER_KEY: "sk-or-v1-0a1b2c3d", HOME: "/root" });
  assert.deepEqual(collectSecrets(undefined, env), []);
  assert.deepEqual(collectSecrets(undefined, env, variables), ["sk-or-v1-0a1b2c3d"]);
});

/** Any character a terminal could act on, besides the line's own trailing newline. */
// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\x00-\x1f\x7f-\x9f\u202e]/;

Deno.test("log: control characters in any value are shown as escapes, never emitted (text and JSON)", () => {
  const hostile = {
    clipboard: "\x1b]52;c;aGVsbG8=\x07", // OSC 52: writes the clipboard
    title: "\x1b]0;pwned\x1b\\", // OSC 0: sets the window title
    overwrite: "ok\rINFO  all fine", // CR: overwrites what came before
    csi: "\u009b2J", // C1 CSI: clears the screen
    bidi: "abc\u202edcba",
  };
  for (const json of [false, true]) {
    const lines = capture({ json }, () => {
      moduleLogger("test").with({ turn: "t\x1b[31m" }).info("path {path}", {
        path: `/v1/${hostile.clipboard}`,
        ...hostile,
      });
    });
    assert.equal(lines.length, 1);
    const line = lines[0].slice(0, -1);
    assert.doesNotMatch(line, RAW_CONTROL, JSON.stringify(line));
    if (json) {
      const record = JSON.parse(line);
      // The values survive intact for a program reading the JSON.
      assert.equal(record.clipboard, hostile.clipboard);
      assert.equal(record.csi, hostile.csi);
    } else {
      assert.match(line, /\[turn t\\x1b\[31m\] path \/v1\/\\x1b\]52;c;aGVsbG8=\\x07/);
      assert.match(line, /overwrite="ok\\rINFO {2}all fine"/);
      assert.match(line, /\\x9b2J/);
      assert.match(line, /abc\\u202edcba/);
    }
  }
});

Deno.test("log: a request path or model carrying escape sequences reaches the text log escaped", async () => {
  const lines = [] as string[];
  setupLogging({ level: "debug", json: false, write: (line) => lines.push(line) });
  const server = startServer(
    testConfig({
      port: 0,
      fanOutPolicy: "never",
      defaultAgents: [{ runner: "claude", model: "o" }],
    }),
    { runAgent: fakeAgents(() => ({ text: "answer" })).runAgent, graceMs: 0 },
  );
  try {
    for (const path of ["/%1B%5D52%3Bc%3BaGVsbG8%3D%07", "/v1/x%0DINFO%20fine", "/%C2%9B2J"]) {
      await (await fetch(`${server.origin}${path}`)).body?.cancel();
    }
    const response = await fetch(`${server.origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude\x1b]0;pwned\x07\r",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  } finally {
    await server.shutdown();
    resetSync();
  }
  assert.ok(
    lines.some((l) => l.includes("GET /\\x1b]52%3Bc%3BaGVsbG8%3D\\x07 404")),
    lines.join(""),
  );
  assert.ok(lines.some((l) => l.includes("GET /v1/x\\rINFO fine 404")));
  assert.ok(lines.some((l) => l.includes("GET /\\x9b2J 404")));
  assert.ok(lines.some((l) => l.includes("model=claude\\x1b]0;pwned\\x07\\r")));
  for (const line of lines) assert.doesNotMatch(line.slice(0, -1), RAW_CONTROL, line);
});
