import assert from "node:assert/strict";
import { startFakeVendor } from "../support/fake_vendor/mod.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { cleanBaseEnv, EventLog, tempDir, testRunner } from "../support/agent_runner.ts";

const HOST_ENV = cleanBaseEnv({
  SVC_GATEWAY_TOKEN: "gateway-secret",
  SVC_CONFIG: "/etc/council.yaml",
  ANTHROPIC_API_KEY: "sk-ant-gateway",
  OPENAI_API_KEY: "sk-openai-gateway",
  CLAUDECODE: "1",
  CLAUDE_CODE_SESSION_ID: "host-session",
  GEMINI_CLI: "1",
  ANTHROPIC_BASE_URL: "http://localhost:6767",
  OPENAI_BASE_URL: "http://[::1]:6767/v1",
  GOOGLE_GEMINI_BASE_URL: "https://generativelanguage.example.com",
  KEEP_ME: "kept",
});

async function dumpedEnv(
  options: Parameters<typeof testRunner>[0],
  runOptions: { hostCredentials?: Record<string, string> } = {},
  agentEnv: Record<string, string> = {},
): Promise<Record<string, string>> {
  const agent = fakeAgent("claude", { modes: ["dump-env"] }, { env: agentEnv });
  const result = await testRunner(options)(agent, "hi", { role: "child", ...runOptions });
  assert.equal(result.ok, true, result.error);
  return JSON.parse(result.text);
}

Deno.test("run: the child's environment is scrubbed, marked, and the agent's env wins", async () => {
  const env = await dumpedEnv(
    { baseEnv: HOST_ENV, selfOrigins: () => ["http://127.0.0.1:6767"], isRoot: true },
    { hostCredentials: { ANTHROPIC_API_KEY: "sk-ant-request" } },
    { OPENAI_API_KEY: "sk-explicit" },
  );
  for (
    const name of [
      "SVC_GATEWAY_TOKEN",
      "SVC_CONFIG",
      "ANTHROPIC_API_KEY",
      "CLAUDECODE",
      "CLAUDE_CODE_SESSION_ID",
      "GEMINI_CLI",
      "ANTHROPIC_BASE_URL",
      "OPENAI_BASE_URL",
    ]
  ) assert.equal(env[name], undefined, `${name} leaked into the child`);
  assert.equal(env.OPENAI_API_KEY, "sk-explicit", "explicit agent env wins");
  assert.equal(env.GOOGLE_GEMINI_BASE_URL, "https://generativelanguage.example.com");
  assert.equal(env.KEEP_ME, "kept");
  assert.equal(env.ANTHROPIC_CUSTOM_HEADERS, "x-council-depth: 1");
  assert.equal(env.COUNCIL_GATEWAY_CHILD, "1");
  assert.equal(env.IS_SANDBOX, "1", "claude as root needs IS_SANDBOX");
});

Deno.test("run: provider keys pass only with passApiKeys, the request's over the gateway's", async () => {
  const env = await dumpedEnv(
    { baseEnv: HOST_ENV, passApiKeys: true, isRoot: true },
    { hostCredentials: { ANTHROPIC_API_KEY: "sk-ant-request" } },
  );
  assert.equal(env.ANTHROPIC_API_KEY, "sk-ant-request");
  assert.equal(env.OPENAI_API_KEY, "sk-openai-gateway");
  assert.equal(env.SVC_GATEWAY_TOKEN, undefined);
});

Deno.test("run: IS_SANDBOX is set only when the gateway runs as root", async () => {
  const agent = fakeAgent("command", { modes: ["dump-env"] });
  const asUser = await testRunner({ isRoot: false })(agent, "hi", { role: "child" });
  assert.equal(JSON.parse(asUser.text).IS_SANDBOX, undefined);
  const claudeAsUser = await testRunner({ isRoot: false })(
    fakeAgent("claude", { modes: ["dump-env"] }),
    "hi",
    { role: "child" },
  );
  if (Deno.uid() === 0) {
    // The fake refuses --dangerously-skip-permissions as root without IS_SANDBOX, like claude.
    assert.equal(claudeAsUser.ok, false);
    assert.match(claudeAsUser.error!, /cannot be used with root/);
  } else assert.equal(JSON.parse(claudeAsUser.text).IS_SANDBOX, undefined);
});

Deno.test("run: a claude child sends the depth header the gateway refuses", async () => {
  await using vendor = startFakeVendor({
    answer: { fail: { status: 400, message: "recursive call" } },
  });
  const url = vendor.origin;
  const agent = fakeAgent("claude", { modes: ["post"], postUrl: url });
  const result = await testRunner({ baseEnv: HOST_ENV })(agent, "hi", { role: "child" });
  assert.equal(result.text, `POST ${url}/v1/messages -> 400`);
  const seen = vendor.requests.map((r) => ({
    depth: r.headers.get("x-council-depth"),
    apiKey: r.headers.get("x-api-key"),
    path: r.path,
  }));
  assert.deepEqual(seen, [{ depth: "1", apiKey: null, path: "/v1/messages" }]);
});

Deno.test("run: the child runs in the given cwd; without one, in a temp dir removed afterwards", async () => {
  await using dirScope = await tempDir();
  const dir = dirScope.path;
  const log = `${dir}/fake.log`;
  const runner = testRunner();
  const given = await runner(fakeAgent("gemini", { log }), "one", { role: "child", cwd: dir });
  assert.equal(given.ok, true, given.error);
  const fresh = await runner(fakeAgent("gemini", { log }), "two", { role: "child" });
  assert.equal(fresh.ok, true, fresh.error);
  const [first, second] = await readFakeLog(log);
  assert.equal(first.cwd, dir);
  assert.notEqual(second.cwd, dir);
  assert.match(second.cwd, /council-child-/);
  await assert.rejects(Deno.stat(second.cwd), Deno.errors.NotFound, "temp dir removed");
  assert.ok((await Deno.stat(dir)).isDirectory, "a given cwd is left alone");
});

Deno.test("run: model override, role and argv reach the child; events come in order", async () => {
  await using dirScope = await tempDir();
  const dir = dirScope.path;
  const log = `${dir}/fake.log`;
  const events = new EventLog();
  const agent = fakeAgent("claude", {
    log,
    reply: "The answer is 42.",
    chunkChars: 5,
    tools: [{ name: "Read", input: { file_path: `${dir}/notes.txt` } }],
  });
  const result = await testRunner()(agent, "question", {
    role: "synth",
    model: "claude-haiku-4-5",
    cwd: dir,
    onEvent: events.onEvent,
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.model, "claude-haiku-4-5");
  assert.equal(result.role, "synth");
  assert.equal(result.exitCode, 0);
  const [call] = await readFakeLog(log);
  assert.equal(call.model, "claude-haiku-4-5");
  assert.equal(call.prompt, "question");
  const types = events.events.map((e) => e.type);
  assert.equal(types[0], "started");
  assert.equal(types.at(-1), "finished");
  assert.equal(types.filter((t) => t === "finished").length, 1);
  assert.deepEqual(events.ofType("activity").map((e) => e.text), ["Read notes.txt"]);
  assert.equal(events.text, "The answer is 42.");
  assert.equal(events.ofType("text").length, 4, "streamed in chunks");
  const usage = events.ofType("usage");
  assert.ok(usage.length >= 1 && usage.length <= events.ofType("text").length + 2);
  assert.ok(usage.every((u, i) => i === 0 || u.outputTokens >= usage[i - 1].outputTokens));
});

Deno.test("run: non-zero exit is an error naming agent, exit code and the last stderr line", async () => {
  const agent = fakeAgent("command", {
    modes: ["fail-mid"],
    reply: "half of this answer",
    exitCode: 3,
    stderr: "warming up\nboom: disk on fire",
  });
  const result = await testRunner()(agent, "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(result.exitCode, 3);
  assert.equal(result.error, "fake-command: exit code 3: boom: disk on fire");
  assert.ok(result.text.length > 0 && "half of this answer".startsWith(result.text));
});

Deno.test("run: a failure names the stderr line that says what is wrong, not advice after it", async () => {
  const agent = fakeAgent("gemini", {
    modes: ["crash"],
    stderr: "You must specify the API key variable.\nUpdate your environment and try again!",
  });
  const result = await testRunner()(agent, "hi", { role: "child" });
  assert.equal(result.error, "fake-gemini: exit code 1: You must specify the API key variable.");
});

Deno.test("run: a crash at start is an error with its stderr", async () => {
  const agent = fakeAgent("codex", { modes: ["crash"], stderr: "fatal: no config" });
  const result = await testRunner()(agent, "x".repeat(1_000_000), { role: "child" });
  assert.equal(result.error, "fake-codex: exit code 1: fatal: no config");
  assert.equal(result.usage.inputTokens, 0, "nothing ran, nothing is charged");
});

Deno.test("run: the CLI's own error result is the error (claude is_error, codex, gemini)", async () => {
  const runner = testRunner();
  const claude = await runner(
    fakeAgent("claude", { modes: ["error"], errorText: "API Error: 529 overloaded" }),
    "hi",
    { role: "child" },
  );
  assert.equal(claude.error, "fake-claude: exit code 1: API Error: 529 overloaded");
  const codex = await runner(
    fakeAgent("codex", { modes: ["error"], errorText: "stream disconnected" }),
    "hi",
    { role: "child" },
  );
  assert.equal(codex.error, "fake-codex: exit code 1: stream disconnected");
  const gemini = await runner(
    fakeAgent("gemini", { modes: ["error"], errorText: "quota exceeded", exitCode: 0 }),
    "hi",
    { role: "child" },
  );
  assert.equal(gemini.error, "fake-gemini: quota exceeded");
});

Deno.test("run: exit 0 without a result line is an error that counts unparseable lines", async () => {
  const runner = testRunner();
  const noResult = await runner(
    fakeAgent("claude", { modes: ["no-result", "invalid-json"], reply: "streamed" }),
    "hi",
    { role: "child" },
  );
  assert.equal(noResult.ok, false);
  assert.equal(
    noResult.error,
    'fake-claude: exited 0 without a result; 2 unparseable line(s), last: "{broken json"',
  );
  assert.equal(noResult.text, "streamed", "the partial text is kept");

  const mixed = await runner(fakeAgent("gemini", { modes: ["invalid-json"] }), "hi", {
    role: "child",
  });
  assert.equal(mixed.ok, true, "stray lines do not fail a run that has its result");
});

Deno.test("run: an empty answer is not a success", async () => {
  const result = await testRunner()(fakeAgent("codex", { reply: "" }), "hi", { role: "child" });
  assert.equal(result.ok, false);
  assert.equal(result.error, "fake-codex: exited 0 with an empty answer");
});

Deno.test("run: cost the CLI reports is used as is", async () => {
  const agent = fakeAgent("claude", { costUsd: 0.42, inputTokens: 1000, outputTokens: 50 });
  const result = await testRunner()(agent, "hi", { role: "child" });
  assert.deepEqual(result.usage, {
    inputTokens: 1000,
    outputTokens: 50,
    costUsd: 0.42,
    estimated: false,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
});

Deno.test("run: reported tokens without cost are priced from the table", async () => {
  const agent = fakeAgent("codex", { inputTokens: 1000, outputTokens: 500 });
  const result = await testRunner()(agent, "hi", { role: "child", model: "gpt-5.5" });
  assert.equal(result.usage.inputTokens, 1000);
  assert.equal(result.usage.outputTokens, 500);
  assert.ok(Math.abs(result.usage.costUsd - (1000 * 5 + 500 * 30) / 1e6) < 1e-12);
  assert.equal(result.usage.estimated, true);
});

Deno.test("run: with nothing reported, tokens are chars/4 and config pricing applies", async () => {
  const agent = fakeAgent("command", { reply: "x".repeat(399) }, { model: "my-local-model" });
  const result = await testRunner({ pricing: { "my-local": { input: 1, output: 2 } } })(
    agent,
    "p".repeat(4000),
    { role: "child" },
  );
  assert.equal(result.usage.inputTokens, 1000);
  assert.equal(result.usage.outputTokens, 100, "399 chars + newline = 400 chars");
  assert.ok(Math.abs(result.usage.costUsd - (1000 * 1 + 100 * 2) / 1e6) < 1e-12);
  assert.equal(result.usage.estimated, true);
});

Deno.test("run: a zero cost with zero tokens (truncated stream) is estimated instead", async () => {
  const agent = fakeAgent("claude", { costUsd: 0, inputTokens: 0, outputTokens: 0, reply: "abcd" });
  const result = await testRunner()(agent, "12345678", { role: "child", model: "opus" });
  assert.equal(result.usage.inputTokens, 2);
  assert.equal(result.usage.outputTokens, 1);
  assert.ok(result.usage.costUsd > 0);
  assert.equal(result.usage.estimated, true);
});

Deno.test("run: a call that never reached a model (an API error, zero usage, no text) costs nothing", async () => {
  // Claude Code's shape when the API refuses the key: an is_error result, zero usage and cost.
  const agent = fakeAgent("claude", {
    modes: ["error"],
    reply: "",
    errorText: "API Error: 401 invalid x-api-key",
    costUsd: 0,
    inputTokens: 0,
    outputTokens: 0,
  });
  const result = await testRunner()(agent, "p".repeat(40_000), { role: "child", model: "opus" });
  assert.equal(result.ok, false);
  assert.deepEqual(result.usage, { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true });
  // The same failure after the model wrote something is still billed by estimate.
  const partial = fakeAgent("claude", {
    modes: ["error"],
    reply: "half an answer",
    costUsd: 0,
    inputTokens: 0,
    outputTokens: 0,
  });
  const billed = await testRunner()(partial, "p".repeat(40_000), { role: "child", model: "opus" });
  assert.equal(billed.ok, false);
  assert.ok(billed.usage.costUsd > 0);
});

Deno.test("run: a command agent without a command fails clearly; throwing handlers are survived", async () => {
  const result = await testRunner()(
    { name: "mine", runner: "command", model: "m", args: [], env: {}, timeoutMs: 1000 },
    "hi",
    { role: "child" },
  );
  assert.equal(result.error, 'mine: runner "command" needs a `command` to run');

  const survived = await testRunner()(fakeAgent("gemini"), "hi", {
    role: "child",
    onEvent: () => {
      throw new Error("consumer bug");
    },
  });
  assert.equal(survived.ok, true, survived.error);
  assert.equal(survived.text, "Hello from fake-gemini");
});

Deno.test("run: rules pick the reply by prompt, so a council can be scripted", async () => {
  const agent = fakeAgent("claude", {
    reply: "default",
    rules: [
      { match: "judge this", reply: '{"fanOut": true}' },
      { match: "break", mode: "error", errorText: "scripted failure" },
    ],
  });
  const runner = testRunner();
  assert.equal(
    (await runner(agent, "please judge this", { role: "judge" })).text,
    '{"fanOut": true}',
  );
  assert.equal((await runner(agent, "anything", { role: "child" })).text, "default");
  const broken = await runner(agent, "break it", { role: "child" });
  assert.equal(broken.error, "fake-claude: exit code 1: scripted failure");
});

Deno.test("run: the scrubbed environment follows the gateway's origins once they are known", async () => {
  // The runner scrubs the gateway's variables once, but again when its origins change (the
  // port is known only after listening): a URL that now reaches the gateway must not pass.
  let origins: string[] = [];
  const agent = fakeAgent("claude", { modes: ["dump-env"] });
  const runner = testRunner({ baseEnv: HOST_ENV, selfOrigins: () => origins });
  const run = async () => {
    const result = await runner(agent, "hi", { role: "child" });
    assert.equal(result.ok, true, result.error);
    return JSON.parse(result.text) as Record<string, string>;
  };
  const before = await run();
  assert.equal(before.GOOGLE_GEMINI_BASE_URL, HOST_ENV.GOOGLE_GEMINI_BASE_URL);
  assert.equal(before.ANTHROPIC_BASE_URL, HOST_ENV.ANTHROPIC_BASE_URL, "not yet the gateway's");
  origins = ["http://127.0.0.1:6767"];
  const after = await run();
  assert.equal(after.ANTHROPIC_BASE_URL, undefined);
  assert.equal(after.OPENAI_BASE_URL, undefined);
  assert.equal(after.GOOGLE_GEMINI_BASE_URL, HOST_ENV.GOOGLE_GEMINI_BASE_URL);
  assert.equal(after.KEEP_ME, "kept");
});

Deno.test("run: a CLI lingering after its answer is ended at once; its answer stands", async () => {
  for (const cli of ["claude", "codex", "gemini"] as const) {
    await using dir = await tempDir();
    const log = `${dir.path}/log`;
    const agent = fakeAgent(cli, {
      modes: ["linger"],
      lingerMs: 30_000,
      reply: `answer from ${cli}`,
      log,
    });
    const started = performance.now();
    const result = await testRunner()(agent, "hi", { role: "child" });
    assert.ok(result.ok, result.error);
    assert.equal(result.text, `answer from ${cli}`);
    assert.equal(result.exitCode, 0);
    assert.ok(performance.now() - started < 15_000, "not held for the CLI's 30 s linger");
    const [{ pid }] = await readFakeLog(log);
    assert.throws(() => Deno.kill(Number(pid), "SIGCONT"), "the lingering CLI is gone");
  }
});

Deno.test("run: a CLI reporting an error result is left to exit on its own (its exit code tells)", async () => {
  const agent = fakeAgent("claude", {
    modes: ["error", "linger"],
    errorText: "API Error: 529 overloaded",
    lingerMs: 300,
  });
  const result = await testRunner()(agent, "hi", { role: "child" });
  assert.equal(result.error, "fake-claude: exit code 1: API Error: 529 overloaded");
  assert.ok(result.durationMs >= 300, "waited for the CLI's own exit");
});

Deno.test("run: a gemini child gets a compile cache under the gateway user's cache dir", async () => {
  const runner = testRunner({ baseEnv: cleanBaseEnv({ HOME: "/home/someone" }) });
  const result = await runner(fakeAgent("gemini", { modes: ["dump-env"] }), "hi", {
    role: "child",
  });
  assert.equal(result.ok, true, result.error);
  const env = JSON.parse(result.text);
  assert.equal(env.NODE_COMPILE_CACHE, "/home/someone/.cache/council-gateway/node-compile-cache");
  const claude = await runner(fakeAgent("claude", { modes: ["dump-env"] }), "hi", {
    role: "child",
  });
  assert.equal(JSON.parse(claude.text).NODE_COMPILE_CACHE, undefined, "claude is no Node program");
});
