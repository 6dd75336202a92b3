import assert from "node:assert/strict";
import { getLogger, resetSync } from "@logtape/logtape";
import {
  collectSecrets,
  createRedactor,
  type LevelName,
  moduleLogger,
  setupLogging,
} from "../../src/log.ts";
import { envOf } from "./helpers.ts";

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
