import assert from "node:assert/strict";
import { DEFAULT_ATTACHMENT_POLICY } from "../../src/protocol/attachment_policy.ts";
import { join } from "node:path";
import {
  configCandidates,
  ConfigError,
  ConfigSchema,
  loadConfig,
  parseConfigObject,
} from "../../src/config/mod.ts";
import { findOnPath } from "../../src/base/executables.ts";
import { discoverAgents } from "../../src/agents/cli/runners.ts";
import { envOf, tempDir, writeFile, writeScript } from "../support/temp_scripts.ts";

/** Loads from a YAML text in a fresh dir with only the given env. */
async function loadYaml(yaml: string, env: Record<string, string> = {}) {
  await using dir = await tempDir();
  const path = await writeFile(dir.path, "council.yaml", yaml);
  return loadConfig({ configPath: path, env: envOf({ PATH: "", ...env }), cwd: dir.path });
}

async function configError(yaml: string, env: Record<string, string> = {}): Promise<string> {
  try {
    await loadYaml(yaml, env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.message;
  }
  assert.fail("expected a ConfigError");
}

const AGENTS = "defaultAgents:\n  - runner: claude\n    model: opus\n";

Deno.test("config: defaults match CONTRACT.md §2.5", async () => {
  const config = await loadYaml(AGENTS);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.port, 6767);
  assert.equal(config.token, undefined);
  assert.equal(config.logLevel, "info");
  assert.equal(config.logJson, false);
  assert.equal(config.streamProgress, true);
  assert.equal(config.progressDetail, "telemetry");
  assert.equal(config.fanOutPolicy, "auto");
  assert.equal(config.fanOutScope, "first-turn");
  assert.equal(config.maxTurns, 100);
  assert.equal(config.maxSessionUsd, 0);
  assert.equal(config.sessionCapacity, 10000);
  assert.equal(config.ledger, "");
  assert.equal(config.allowUnauthenticatedRemote, false);
  assert.equal(config.passApiKeys, false);
  assert.equal(config.heartbeatMs, 5000);
  assert.equal(config.telemetryMs, 2000);
  assert.equal(config.keepAliveMs, 3000);
  assert.equal(config.maxBodyBytes, 33554432);
  assert.equal(config.maxImageBytes, 5242880);
  assert.equal(config.maxAttachmentBytes, 20971520);
  assert.equal(config.maxAttachments, 100);
  assert.equal(config.fetchAttachmentUrls, false);
  assert.equal(config.maxBodyBytesInFlight, 67108864);
  assert.equal(config.maxConcurrentTurns, 4);
  assert.equal(config.maxQueuedTurns, 32);
  assert.equal(config.maxConnections, 256);
  assert.equal(config.headerTimeoutMs, 10000);
  assert.equal(config.bodyTimeoutMs, 60000);
  assert.equal(config.idleTimeoutMs, 120000);
  assert.deepEqual(config.pricing, {});
  assert.equal(config.councilSize, 1);
  assert.deepEqual(config.defaultAgents, [{
    name: "claude",
    runner: "claude",
    model: "opus",
    args: [],
    env: {},
    timeoutMs: 600000,
  }]);
  assert.equal(config.agentsSource, "config");
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.defaultAgents[0]));
});

Deno.test("config: the issue's example message for a misspelled runner", async () => {
  const message = await configError(
    "defaultAgents:\n  - runner: claude\n    model: opus\n  - runner: cladue\n    model: x\n",
  );
  assert.equal(
    message,
    'config: defaultAgents[1].runner: "cladue" is not one of claude, codex, gemini, opencode, command, ' +
      "anthropic, openai",
  );
});

Deno.test("config: an unknown key names its path and the allowed keys", async () => {
  assert.equal(
    await configError("fanoutPolicy: always\n"),
    "config: fanoutPolicy: unknown key (did you mean fanOutPolicy?); allowed: " +
      Object.keys(ConfigSchema.shape).join(", "),
  );
  assert.match(
    await configError("fanoutPolicy: always\n"),
    /; allowed: host, port, token, logLevel, .*fanOutPolicy, .*defaultAgents, pricing/,
  );
  assert.equal(
    await configError("defaultAgents:\n  - runner: claude\n    model: opus\n    modle: x\n"),
    "config: defaultAgents[0].modle: unknown key; allowed: name, runner, model, command, args, " +
      "env, timeoutMs, baseUrl, apiKeyEnv, headers, maxTokens, contextTokens",
  );
});

Deno.test("config: wrong types, ranges and missing fields are precise", async () => {
  assert.equal(await configError('port: "abc"\n'), 'config: port: "abc" is not a number');
  assert.equal(
    await configError("port: 70000\n"),
    "config: port: 70000 is too big: must be at most 65535",
  );
  assert.equal(
    await configError("maxTurns: 0\n"),
    "config: maxTurns: 0 is too small: must be more than 0",
  );
  assert.equal(await configError("maxTurns: 1.5\n"), "config: maxTurns: 1.5 is not a whole number");
  assert.equal(
    await configError("streamProgress: yes please\n"),
    'config: streamProgress: "yes please" is not true or false',
  );
  assert.equal(
    await configError("defaultAgents:\n  - runner: codex\n"),
    "config: defaultAgents[0].model: is required (a string)",
  );
  assert.equal(
    await configError("defaultAgents: []\n"),
    "config: defaultAgents: must list at least 1 entry",
  );
  assert.equal(
    await configError("fanOutPolicy: sometimes\n"),
    'config: fanOutPolicy: "sometimes" is not one of always, auto, necessary, never',
  );
  assert.equal(
    await configError("pricing:\n  claude-opus-4: { input: -1, output: 75 }\n"),
    "config: pricing.claude-opus-4.input: -1 is too small: must be at least 0",
  );
});

Deno.test("config: a command runner must name its executable", async () => {
  assert.equal(
    await configError(AGENTS + "  - runner: command\n    model: m\n"),
    'config: defaultAgents[1].command: is required when runner is "command"',
  );
});

Deno.test("config: an invalid token value is never echoed", async () => {
  const message = await configError("token: 123456789\n");
  assert.equal(message, "config: token: (hidden) is not a string");
});

Deno.test("config: env errors name the variable", async () => {
  assert.equal(
    await configError(AGENTS, { SVC_LOG_LEVEL: "verbose" }),
    'config: logLevel (from SVC_LOG_LEVEL): "verbose" is not one of debug, info, warn, error',
  );
  assert.equal(
    await configError(AGENTS, { SVC_GATEWAY_PORT: "80a" }),
    'config: SVC_GATEWAY_PORT: "80a" is not a whole number',
  );
  assert.equal(
    await configError(AGENTS, { SVC_GATEWAY_PORT: "99999" }),
    "config: port (from SVC_GATEWAY_PORT): 99999 is too big: must be at most 65535",
  );
  assert.equal(
    await configError(AGENTS, { SVC_PASS_API_KEYS: "maybe" }),
    'config: SVC_PASS_API_KEYS: "maybe" is not one of 1, 0 (or true, false)',
  );
  assert.equal(
    await configError(AGENTS, { SVC_PROGRESS_DETAIL: "loud" }),
    'config: progressDetail (from SVC_PROGRESS_DETAIL): "loud" is not one of telemetry, interleaved',
  );
});

Deno.test("config: YAML problems are one clear line", async () => {
  const invalid = await configError("port: [1\n");
  assert.match(invalid, /^config: .*council\.yaml: invalid YAML: /);
  assert.ok(!invalid.includes("\n"));
  assert.match(await configError("- a\n- b\n"), /the top level must be a mapping of keys$/);
  assert.match(await configError("port: 1\nport: 2\n"), /invalid YAML: Map keys must be unique/);
  // An empty file is just defaults.
  assert.equal((await loadYaml("")).port, 6767);
});

Deno.test("config: precedence is flags > env > file > defaults", async () => {
  const file = AGENTS + "host: 127.0.0.2\nport: 7000\nlogLevel: warn\nheartbeatMs: 100\n";
  // file over defaults
  let config = await loadYaml(file);
  assert.equal(config.port, 7000);
  assert.equal(config.logLevel, "warn");
  assert.equal(config.heartbeatMs, 100);
  assert.equal(config.telemetryMs, 2000);
  // env over file
  config = await loadYaml(file, {
    SVC_GATEWAY_HOST: "127.0.0.3",
    SVC_GATEWAY_PORT: "0",
    SVC_GATEWAY_TOKEN: "tok-abc",
    SVC_PASS_API_KEYS: "1",
    SVC_LOG_LEVEL: "DEBUG",
    SVC_LOG_JSON: "1",
    SVC_PROGRESS_DETAIL: "interleaved",
    SVC_HEARTBEAT_MS: "250",
    SVC_TELEMETRY_MS: "500",
  });
  assert.equal(config.host, "127.0.0.3");
  assert.equal(config.port, 0);
  assert.equal(config.token, "tok-abc");
  assert.equal(config.passApiKeys, true);
  assert.equal(config.logLevel, "debug");
  assert.equal(config.logJson, true);
  assert.equal(config.progressDetail, "interleaved");
  assert.equal(config.heartbeatMs, 250);
  assert.equal(config.telemetryMs, 500);
  // empty variables count as unset; 0 turns a flag off
  config = await loadYaml(file + "passApiKeys: true\n", {
    SVC_GATEWAY_PORT: "",
    SVC_GATEWAY_TOKEN: "",
    SVC_PASS_API_KEYS: "0",
  });
  assert.equal(config.port, 7000);
  assert.equal(config.token, undefined);
  assert.equal(config.passApiKeys, false);
  // flags over env
  await using dir = await tempDir();
  const path = await writeFile(dir.path, "c.yaml", file);
  config = loadConfig({
    configPath: path,
    overrides: { host: "127.0.0.9", port: 1234 },
    env: envOf({ SVC_GATEWAY_HOST: "127.0.0.3", SVC_GATEWAY_PORT: "5555" }),
  });
  assert.equal(config.host, "127.0.0.9");
  assert.equal(config.port, 1234);
});

Deno.test("config: lookup order --config > $SVC_CONFIG > ./council.yaml > XDG > ~/.config", async () => {
  await using dir = await tempDir();
  const cwd = join(dir.path, "work");
  const explicit = await writeFile(dir.path, "explicit.yaml", "port: 1001\n");
  const fromEnv = await writeFile(dir.path, "env.yaml", "port: 1002\n");
  const local = await writeFile(cwd, "council.yaml", "port: 1003\n");
  const xdg = await writeFile(dir.path, "xdg/council-gateway/config.yaml", "port: 1004\n");
  const home = await writeFile(
    dir.path,
    "home/.config/council-gateway/config.yaml",
    "port: 1005\n",
  );
  const base = { PATH: "", HOME: join(dir.path, "home") };
  const load = (env: Record<string, string>, configPath?: string) =>
    loadConfig({ configPath, env: envOf({ ...base, ...env }), cwd });

  let config = load({ SVC_CONFIG: fromEnv, XDG_CONFIG_HOME: join(dir.path, "xdg") }, explicit);
  assert.deepEqual([config.port, config.configPath], [1001, explicit]);
  config = load({ SVC_CONFIG: fromEnv, XDG_CONFIG_HOME: join(dir.path, "xdg") });
  assert.deepEqual([config.port, config.configPath], [1002, fromEnv]);
  config = load({ XDG_CONFIG_HOME: join(dir.path, "xdg") });
  assert.deepEqual([config.port, config.configPath], [1003, local]);
  await Deno.remove(local);
  config = load({ XDG_CONFIG_HOME: join(dir.path, "xdg") });
  assert.deepEqual([config.port, config.configPath], [1004, xdg]);
  config = load({});
  assert.deepEqual([config.port, config.configPath], [1005, home]);
  await Deno.remove(home);
  config = load({});
  assert.deepEqual([config.port, config.configPath], [6767, null]);
  // Relative paths resolve against cwd.
  assert.deepEqual(configCandidates("x.yaml", envOf({}), "/srv"), ["/srv/x.yaml"]);
});

Deno.test("config: a named file that does not exist is an error, not a silent default", async () => {
  await using dir = await tempDir();
  const missing = join(dir.path, "nope.yaml");
  for (const [configPath, env] of [[missing, {}], [undefined, { SVC_CONFIG: missing }]] as const) {
    assert.throws(
      () => loadConfig({ configPath, env: envOf(env), cwd: dir.path }),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message === `config: cannot read ${missing}: file not found`,
    );
  }
});

Deno.test("config: without defaultAgents, the claude/codex/gemini CLIs on PATH are used", async () => {
  await using dir = await tempDir();
  await writeScript(dir.path, "claude", "exit 0");
  await writeScript(dir.path, "gemini", "exit 0");
  // Not executable: ignored.
  await writeFile(dir.path, "codex", "#!/bin/sh\n");
  const env = envOf({ PATH: `/nonexistent:${dir.path}` });
  const config = loadConfig({ env, cwd: dir.path, discover: discoverAgents });
  assert.deepEqual(
    config.defaultAgents.map((a) => [a.name, a.runner, a.model]),
    [["claude", "claude", "opus"], ["gemini", "gemini", "gemini-2.5-pro"]],
  );
  assert.equal(config.agentsSource, "path");
  assert.equal(config.councilSize, 2);
  // None found: still a valid config, with no agents.
  const none = loadConfig({
    env: envOf({ PATH: "/nonexistent" }),
    cwd: dir.path,
    discover: discoverAgents,
  });
  assert.deepEqual(none.defaultAgents, []);
  assert.equal(none.councilSize, 1);
});

Deno.test("config: findOnPath finds executables and absolute paths only", async () => {
  await using dir = await tempDir();
  const script = await writeScript(dir.path, "tool", "exit 0");
  assert.equal(findOnPath("tool", envOf({ PATH: dir.path })), script);
  assert.equal(findOnPath(script, envOf({})), script);
  assert.equal(findOnPath("tool", envOf({ PATH: "/nonexistent" })), null);
  assert.equal(findOnPath(join(dir.path, "missing"), envOf({})), null);
});

Deno.test("config: duplicate agent names are made unique; councilSize defaults to agent count", async () => {
  const config = await loadYaml(
    "defaultAgents:\n  - { runner: claude, model: opus }\n  - { runner: claude, model: sonnet }\n" +
      "  - { name: fast, runner: codex, model: gpt-5.5 }\n",
  );
  assert.deepEqual(config.defaultAgents.map((a) => a.name), ["claude", "claude-2", "fast"]);
  assert.equal(config.councilSize, 3);
  assert.equal((await loadYaml(AGENTS + "councilSize: 5\n")).councilSize, 5);
});

Deno.test("config: parseConfigObject accepts every key the README documents", () => {
  const parsed = parseConfigObject({
    host: "127.0.0.1",
    port: 6767,
    logLevel: "debug",
    streamProgress: false,
    progressDetail: "interleaved",
    fanOutPolicy: "necessary",
    fanOutScope: "every-turn",
    maxTurns: 5,
    maxSessionUsd: 1.5,
    sessionCapacity: 10,
    ledger: "/tmp/ledger.jsonl",
    allowUnauthenticatedRemote: true,
    councilSize: 2,
    passApiKeys: true,
    heartbeatMs: 1,
    telemetryMs: 1,
    keepAliveMs: 1,
    maxBodyBytes: 1,
    maxBodyBytesInFlight: 1,
    maxConcurrentTurns: 1,
    maxQueuedTurns: 0,
    maxConnections: 1,
    headerTimeoutMs: 1,
    bodyTimeoutMs: 1,
    idleTimeoutMs: 1,
    judge: { runner: "claude", model: "haiku" },
    defaultAgents: [{
      name: "c",
      runner: "command",
      model: "m",
      command: "/bin/cat",
      args: ["{model}"],
      env: { A: "b" },
      timeoutMs: 5,
    }],
    pricing: { "claude-opus-4": { input: 15, output: 75 } },
  });
  assert.equal(parsed.fanOutScope, "every-turn");
  assert.deepEqual(parsed.judge, {
    runner: "claude",
    model: "haiku",
    args: [],
    env: {},
    timeoutMs: 600000,
  });
});

Deno.test("config: the protocol layer's attachment defaults are the config's", async () => {
  const config = await loadYaml(AGENTS);
  assert.deepEqual(DEFAULT_ATTACHMENT_POLICY, {
    maxImageBytes: config.maxImageBytes,
    maxAttachmentBytes: config.maxAttachmentBytes,
    maxAttachments: config.maxAttachments,
    fetchUrls: config.fetchAttachmentUrls,
  });
});
