/**
 * Configuration of HTTP agents: the fields, where they are allowed, precise errors, and the
 * refusal of a base URL that points at the gateway itself.
 */
import assert from "node:assert/strict";
import { runCli } from "../../../src/cli/mod.ts";
import { renderConfig } from "../../../src/cli/show_config.ts";
import { ConfigError, loadConfig } from "../../../src/config/mod.ts";
import { tempDir } from "../../support/agent_runner.ts";

async function load(yaml: string, overrides: { port?: number; host?: string } = {}) {
  await using dir = await tempDir();
  const path = `${dir.path}/council.yaml`;
  await Deno.writeTextFile(path, yaml);
  return loadConfig({ configPath: path, env: () => undefined, cwd: dir.path, overrides });
}

async function configError(yaml: string, overrides: { port?: number; host?: string } = {}) {
  try {
    await load(yaml, overrides);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.message;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("config: HTTP agents with their fields load; no defaults are filled in", async () => {
  const config = await load(
    "defaultAgents:\n" +
      "  - runner: anthropic\n    model: claude-sonnet-4-5\n" +
      "  - runner: openai\n    model: qwen2.5-coder\n    baseUrl: http://localhost:11434/v1\n" +
      "    apiKeyEnv: OLLAMA_KEY\n    headers: { X-Title: council }\n    maxTokens: 4096\n" +
      "  - runner: claude\n    model: opus\n",
  );
  assert.deepEqual(config.defaultAgents.map((a) => [a.name, a.runner]), [
    ["anthropic", "anthropic"],
    ["openai", "openai"],
    ["claude", "claude"],
  ]);
  assert.equal(config.defaultAgents[0].baseUrl, undefined, "the default is the adapter's");
  assert.deepEqual(
    [config.defaultAgents[1].baseUrl, config.defaultAgents[1].apiKeyEnv],
    ["http://localhost:11434/v1", "OLLAMA_KEY"],
  );
  assert.deepEqual(config.defaultAgents[1].headers, { "X-Title": "council" });
  assert.equal(config.defaultAgents[1].maxTokens, 4096);
});

Deno.test("config: openai needs a baseUrl", async () => {
  assert.equal(
    await configError("defaultAgents:\n  - { runner: openai, model: m }\n"),
    'config: defaultAgents[0].baseUrl: is required when runner is "openai" ' +
      "(e.g. http://localhost:11434/v1)",
  );
});

Deno.test("config: CLI fields on an HTTP runner and HTTP fields on a CLI runner are refused", async () => {
  assert.equal(
    await configError(
      "defaultAgents:\n  - { runner: claude, model: opus }\n" +
        "  - { runner: anthropic, model: m, command: /bin/echo }\n",
    ),
    'config: defaultAgents[1].command: not used by runner "anthropic" (an HTTP runner calls its ' +
      "baseUrl); remove it",
  );
  assert.equal(
    await configError(
      "defaultAgents:\n  - { runner: openai, model: m, baseUrl: http://x, args: [] }\n",
    ),
    'config: defaultAgents[0].args: not used by runner "openai" (an HTTP runner calls its ' +
      "baseUrl); remove it",
  );
  assert.equal(
    await configError("defaultAgents:\n  - { runner: claude, model: opus, maxTokens: 10 }\n"),
    'config: defaultAgents[0].maxTokens: only for the HTTP runners (anthropic, openai), not runner "claude"',
  );
  assert.equal(
    await configError(
      "defaultAgents:\n  - { runner: command, model: m, command: /bin/cat, baseUrl: http://x }\n",
    ),
    'config: defaultAgents[0].baseUrl: only for the HTTP runners (anthropic, openai), not runner "command"',
  );
});

Deno.test("config: the judge follows the same rules, inheriting agent 0's endpoint", async () => {
  const base = "defaultAgents:\n  - { runner: openai, model: m, baseUrl: http://localhost:1/v1 }\n";
  const config = await load(`${base}judge: { model: small-model }\n`);
  assert.equal(config.judge?.model, "small-model");
  assert.equal(
    await configError(`${base}judge: { runner: claude, baseUrl: http://x }\n`),
    'config: judge.baseUrl: only for the HTTP runners (anthropic, openai), not runner "claude"',
  );
  assert.equal(
    await configError(
      "defaultAgents:\n  - { runner: claude, model: opus }\njudge: { runner: openai, model: m }\n",
    ),
    'config: judge.baseUrl: is required when runner is "openai" (e.g. http://localhost:11434/v1)',
  );
});

Deno.test("config: baseUrl, apiKeyEnv, headers and maxTokens values are checked precisely", async () => {
  const agent = (fields: string) =>
    `defaultAgents:\n  - { runner: anthropic, model: m, ${fields} }\n`;
  assert.equal(
    await configError(agent("baseUrl: ftp://example.com")),
    'config: defaultAgents[0].baseUrl: "ftp://example.com" is invalid: must be an http:// or ' +
      "https:// URL",
  );
  assert.equal(
    await configError(agent("apiKeyEnv: sk-ant-123")),
    'config: defaultAgents[0].apiKeyEnv: "sk-ant-123" is invalid: must be an environment ' +
      "variable name",
  );
  assert.equal(
    await configError(agent('headers: { "bad header": x }')),
    'config: defaultAgents[0].headers: "bad header" is not a valid header name',
  );
  assert.equal(
    await configError(agent('headers: { x-a: "1\\r\\nx-b: 2" }')),
    "config: defaultAgents[0].headers: the value of x-a has a character a header cannot carry " +
      "(a line break, NUL, or one beyond Latin-1)",
  );
  assert.equal(
    await configError(agent('headers: { x-a: "5 €" }')),
    "config: defaultAgents[0].headers: the value of x-a has a character a header cannot carry " +
      "(a line break, NUL, or one beyond Latin-1)",
  );
  assert.equal(
    await configError(agent("maxTokens: 0")),
    "config: defaultAgents[0].maxTokens: 0 is too small: must be more than 0",
  );
});

Deno.test("config: a baseUrl that reaches the gateway itself is refused (loopback spellings alike)", async () => {
  for (
    const [host, url] of [
      ["127.0.0.1", "http://localhost:6767"],
      ["127.0.0.1", "http://127.0.0.1:6767/v1"],
      ["localhost", "http://[::1]:6767"],
      ["0.0.0.0", "http://127.0.0.2:6767"],
    ]
  ) {
    const message = await configError(
      `host: ${host}\ntoken: t\ndefaultAgents:\n  - { runner: anthropic, model: m, baseUrl: "${url}" }\n`,
    );
    assert.equal(
      message,
      `config: defaultAgents[0].baseUrl: ${JSON.stringify(url)} points at this gateway itself ` +
        `(${host}:6767); a council member calling the gateway would recurse`,
      `${host} vs ${url}`,
    );
  }
  // Another port, or port 0 (not known before listening: refused at run time instead), loads.
  await load(
    "defaultAgents:\n  - { runner: anthropic, model: m, baseUrl: http://localhost:6768 }\n",
  );
  await load(
    "defaultAgents:\n  - { runner: anthropic, model: m, baseUrl: http://localhost:6767 }\n",
    { port: 0 },
  );
  assert.match(
    await configError(
      "defaultAgents:\n  - { runner: claude, model: opus }\n" +
        "judge: { runner: openai, model: m, baseUrl: http://127.0.0.1:7000/v1 }\n",
      { port: 7000 },
    ),
    /^config: judge\.baseUrl: "http:\/\/127\.0\.0\.1:7000\/v1" points at this gateway itself/,
  );
});

Deno.test("serve: a baseUrl at the gateway's own address stops start-up with exit 2", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/council.yaml`;
  await Deno.writeTextFile(
    path,
    "port: 45871\ndefaultAgents:\n  - { runner: openai, model: m, baseUrl: http://localhost:45871/v1 }\n",
  );
  let stderr = "";
  const code = await runCli(["serve", "--config", path], {
    env: () => undefined,
    cwd: dir.path,
    stdout: () => {},
    stderr: (text) => (stderr += text),
  });
  assert.equal(code, 2);
  assert.equal(
    stderr,
    'config: defaultAgents[0].baseUrl: "http://localhost:45871/v1" points at this gateway ' +
      "itself (127.0.0.1:45871); a council member calling the gateway would recurse\n",
  );
});

Deno.test("config command: secret-looking HTTP headers are masked, others shown", async () => {
  const config = await load(
    "defaultAgents:\n  - runner: openai\n    model: m\n    baseUrl: http://localhost:1/v1\n" +
      "    headers: { Authorization: Bearer sk-secret, X-Api-Key: sk-2, X-Title: council }\n",
  );
  const text = renderConfig(config);
  assert.doesNotMatch(text, /sk-secret|sk-2/);
  assert.match(text, /Authorization: "\*\*\*"/);
  assert.match(text, /X-Title: council/);
});
