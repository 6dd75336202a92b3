/**
 * The real entry point as a separate process, with the start task's permission flags, on an
 * ephemeral port: startup line, auth, utility endpoints, error envelopes, logs, exit codes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { eventually } from "../support/wait.ts";
import { gatewayTmpEnv, mainArgs } from "../support/gateway_process.ts";

const TOKEN = "e2e-Gateway-Token-31337";
const PROVIDER_KEY = "sk-ant-e2e-provider-secret";

/** A minimal environment: nothing of the developer's own config may leak in. */
function childEnv(dir: string, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir,
    XDG_CONFIG_HOME: join(dir, "xdg"),
    NO_COLOR: "1",
  };
  for (const name of ["DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value) env[name] = value;
  }
  return { ...env, ...gatewayTmpEnv(dir), ...extra };
}

interface Gateway {
  child: Deno.ChildProcess;
  /** Resolves to the origin from the startup line. */
  listening: Promise<string>;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Resolves when stdout so far matches `pattern` (rejects if the process exits first). */
  waitFor(pattern: RegExp): Promise<void>;
  /** Resolves when the process has exited and its output is read. */
  exited: Promise<{ code: number; stdout: string; stderr: string }>;
}

function spawnGateway(dir: string, args: string[], env: Record<string, string>): Gateway {
  const child = new Deno.Command(Deno.execPath(), {
    args: mainArgs(...args),
    cwd: dir,
    clearEnv: true,
    env: childEnv(dir, env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stdout = "";
  let found!: (origin: string) => void;
  let missing!: (err: Error) => void;
  const listening = new Promise<string>((resolve, reject) => {
    found = resolve;
    missing = reject;
  });
  // Tests that expect an early exit never await it.
  listening.catch(() => {});
  const waiters: { pattern: RegExp; resolve: () => void; reject: (e: Error) => void }[] = [];
  const readStdout = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      stdout += chunk;
      const match = /listening on (http:\/\/[^\s"]+)/.exec(stdout);
      if (match) found(match[1]);
      for (const waiter of waiters) if (waiter.pattern.test(stdout)) waiter.resolve();
    }
    for (const waiter of waiters) waiter.reject(new Error(`exited before ${waiter.pattern}`));
  })();
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      if (pattern.test(stdout)) resolve();
      else waiters.push({ pattern, resolve, reject });
    });
  const readStderr = new Response(child.stderr).text();
  const exited = (async () => {
    const [status, , stderr] = await Promise.all([child.status, readStdout, readStderr]);
    missing(
      new Error(`gateway exited ${status.code} without a startup line:\n${stdout}\n${stderr}`),
    );
    return { code: status.code, stdout, stderr };
  })();
  return { child, listening, waitFor, exited, output: () => stdout };
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cg-e2e-serve-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const CONFIG = `maxBodyBytes: 2000
defaultAgents:
  - { name: echo, runner: command, command: /bin/cat, model: m-echo }
  - { runner: codex, model: gpt-5.5 }
`;

const TEXT_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO |WARN |ERROR) /;

Deno.test("e2e serve: port 0, startup line, auth, endpoints, envelopes, SIGTERM → exit 0, no secrets", async () => {
  await withTempDir(async (dir) => {
    const configPath = join(dir, "council.yaml");
    await Deno.writeTextFile(configPath, CONFIG);
    const gateway = spawnGateway(dir, ["serve"], {
      SVC_GATEWAY_PORT: "0",
      SVC_GATEWAY_TOKEN: TOKEN,
      ANTHROPIC_API_KEY: PROVIDER_KEY,
    });
    try {
      const origin = await gateway.listening;
      const port = Number(new URL(origin).port);
      assert.ok(port > 0);
      const auth = { authorization: `Bearer ${TOKEN}` };
      const call = async (path: string, init: RequestInit = {}) => {
        const res = await fetch(origin + path, init);
        return { status: res.status, body: await res.json() };
      };

      // Auth on every route: missing, wrong, both header styles.
      assert.deepEqual(await call("/v1/models"), {
        status: 401,
        body: { type: "error", error: { type: "authentication_error", message: "unauthorized" } },
      });
      assert.equal(
        (await call("/v1/models", { headers: { authorization: "Bearer nope" } })).status,
        401,
      );
      assert.equal((await call("/nowhere")).status, 401);
      const models = await call("/v1/models", { headers: auth });
      assert.equal(models.status, 200);
      assert.deepEqual(models.body.data.map((m: { id: string }) => m.id), [
        "svc-council",
        "claude-council",
        "m-echo",
        "gpt-5.5",
      ]);
      assert.equal((await call("/v1/models", { headers: { "x-api-key": TOKEN } })).status, 200);

      // 404 for an unknown path and a wrong method.
      const unknown = await call("/v2/anything", { headers: auth });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.type, "not_found_error");
      assert.equal((await call("/v1/messages", { headers: auth })).status, 404);

      // Malformed JSON → 400 in each protocol's shape; query strings are ignored.
      const post = (body: string, headers: Record<string, string> = {}) => ({
        method: "POST",
        body,
        headers: { ...auth, "content-type": "application/json", ...headers },
      });
      const badMessages = await call("/v1/messages?beta=true", post("{oops"));
      assert.equal(badMessages.status, 400);
      assert.equal(badMessages.body.type, "error");
      assert.equal(badMessages.body.error.type, "invalid_request_error");
      const badResponses = await call("/v1/responses", post("{oops"));
      assert.equal(badResponses.status, 400);
      assert.equal(badResponses.body.error.type, "invalid_request_error");

      // 413 over maxBodyBytes.
      const big = await call("/v1/messages", post(JSON.stringify({ pad: "x".repeat(3000) })));
      assert.equal(big.status, 413);
      assert.equal(big.body.error.type, "request_too_large");

      // count_tokens: an estimate, 0 for a body that fails to parse.
      const counted = await call(
        "/v1/messages/count_tokens?beta=true",
        post(
          JSON.stringify({
            model: "m",
            messages: [{ role: "user", content: "y".repeat(401) }],
            tools: [],
          }),
        ),
      );
      assert.deepEqual(counted, { status: 200, body: { input_tokens: 101 } });
      assert.deepEqual(await call("/v1/messages/count_tokens", post("not json")), {
        status: 200,
        body: { input_tokens: 0 },
      });

      // A council child calling back in is refused.
      const recursive = await call("/v1/messages", post("{}", { "x-council-depth": "1" }));
      assert.equal(recursive.status, 400);
      assert.equal(recursive.body.error.message, "recursive call from a council child");

      gateway.child.kill("SIGTERM");
      const { code, stdout } = await gateway.exited;
      assert.equal(code, 0, stdout);
      const lines = stdout.trimEnd().split("\n");
      assert.equal(
        lines[0].replace(TEXT_LINE, ""),
        `listening on http://127.0.0.1:${port} (/v1/messages, /v1/responses) fanOutPolicy=auto ` +
          "fanOutScope=first-turn maxTurns=100 auth=on streamProgress=true progressDetail=telemetry " +
          `logLevel=info agents=echo:m-echo,codex:gpt-5.5 config=${configPath}`,
      );
      for (const line of lines) assert.match(line, TEXT_LINE);
      assert.ok(lines.some((l) => / INFO {2}GET \/v1\/models 401 \d+ms$/.test(l)), stdout);
      assert.ok(lines.at(-1)!.endsWith("INFO  stopped"), lines.at(-1));
      assert.ok(!stdout.includes(TOKEN), "the gateway token appeared in the log");
      assert.ok(!stdout.includes(PROVIDER_KEY), "a provider key appeared in the log");
    } finally {
      try {
        gateway.child.kill("SIGKILL");
      } catch { /* already gone */ }
      await gateway.exited;
    }
  });
});

Deno.test("e2e serve: SVC_LOG_JSON=1 writes only JSON lines; SIGINT → exit 0", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "council.yaml"), CONFIG);
    const gateway = spawnGateway(dir, [], {
      SVC_GATEWAY_PORT: "0",
      SVC_LOG_JSON: "1",
      SVC_LOG_LEVEL: "debug",
      SVC_GATEWAY_TOKEN: TOKEN,
    });
    try {
      const origin = await gateway.listening;
      const res = await fetch(`${origin}/v1/models`, { headers: { "x-api-key": TOKEN } });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      const denied = await fetch(`${origin}/v1/models`, { headers: { "x-api-key": `${TOKEN}x` } });
      assert.equal(denied.status, 401);
      await denied.body?.cancel();
      gateway.child.kill("SIGINT");
      const { code, stdout } = await gateway.exited;
      assert.equal(code, 0);
      const records = stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
      for (const record of records) {
        assert.equal(typeof record.ts, "string");
        assert.ok(["debug", "info", "warn", "error"].includes(record.level));
        assert.equal(typeof record.msg, "string");
      }
      assert.match(
        records[0].msg,
        /^listening on http:\/\/127\.0\.0\.1:\d+ \(\/v1\/messages, \/v1\/responses\) .*logLevel=debug/,
      );
      assert.ok(records.some((r) => r.path === "/v1/models" && r.status === 200));
      assert.ok(!stdout.includes(TOKEN));
    } finally {
      try {
        gateway.child.kill("SIGKILL");
      } catch { /* already gone */ }
      await gateway.exited;
    }
  });
});

/**
 * True when the process is gone or a zombie. (Reading /proc needs --allow-all, which the test
 * task does not grant, so ask the kernel with a harmless signal, then ps for the state.)
 */
function processGone(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    return true;
  }
  try {
    const out = new Deno.Command("ps", {
      args: ["-o", "stat=", "-p", String(pid)],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const state = new TextDecoder().decode(out.stdout).trim();
    return state === "" || state.startsWith("Z");
  } catch {
    return false;
  }
}

Deno.test({
  name: "e2e serve: shutdown during a turn kills its child and still exits 0",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withTempDir(async (dir) => {
      const pidFile = join(dir, "child.pid");
      await Deno.writeTextFile(
        join(dir, "council.yaml"),
        `fanOutPolicy: never
defaultAgents:
  - name: sleeper
    runner: command
    command: /bin/sh
    model: m
    args: ["-c", "echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; exec sleep 60"]
`,
      );
      const gateway = spawnGateway(dir, ["serve"], { SVC_GATEWAY_PORT: "0" });
      const client = new AbortController();
      try {
        const origin = await gateway.listening;
        const reply = fetch(`${origin}/v1/messages`, {
          method: "POST",
          signal: client.signal,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            model: "svc-council",
            max_tokens: 100,
            messages: [{ role: "user", content: "Explain the design of this module in depth." }],
          }),
        }).then((res) => res.text(), () => "");
        const pid = await eventually(
          async () =>
            Number((await Deno.readTextFile(pidFile).catch(() => "")).trim()) || undefined,
          "the child to start",
        ).catch(() => 0);
        assert.ok(pid > 0, "the child never started");
        assert.equal(processGone(pid), false, `child ${pid} is not running:\n${gateway.output()}`);
        // First signal: stop accepting; second: cancel in-flight turns now. (Signals are not
        // queued, so the second is sent once the first has been handled.)
        gateway.child.kill("SIGTERM");
        await gateway.waitFor(/shutting down: no new connections/);
        gateway.child.kill("SIGTERM");
        const { code, stdout } = await gateway.exited;
        assert.equal(code, 0, stdout);
        assert.match(stdout, /shutting down: cancelling in-flight turns/);
        // The group was signalled before the exit; allow the kernel a moment to finish it.
        await eventually(() => processGone(pid), "the child to end", 2_000).catch(() => {});
        assert.ok(processGone(pid), `child ${pid} outlived the gateway:\n${stdout}`);
        await reply;
      } finally {
        client.abort();
        try {
          gateway.child.kill("SIGKILL");
        } catch { /* already gone */ }
        await gateway.exited;
      }
    });
  },
});

Deno.test("e2e serve: start-up refusals exit 2 (remote bind without token, bad config) or 1 (port in use)", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "council.yaml"), CONFIG);
    let run = await spawnGateway(dir, ["serve", "--port", "0"], { SVC_GATEWAY_HOST: "0.0.0.0" })
      .exited;
    assert.equal(run.code, 2);
    assert.equal(run.stdout, "");
    assert.match(
      run.stderr,
      /^config: host: "0\.0\.0\.0" is reachable from other machines and SVC_GATEWAY_TOKEN is not set/,
    );
    assert.equal(run.stderr.trimEnd().split("\n").length, 1);

    await Deno.writeTextFile(
      join(dir, "bad.yaml"),
      "defaultAgents:\n  - { runner: cladue, model: x }\n",
    );
    run = await spawnGateway(dir, ["--config", "bad.yaml"], {}).exited;
    assert.deepEqual(run, {
      code: 2,
      stdout: "",
      stderr:
        'config: defaultAgents[0].runner: "cladue" is not one of claude, codex, gemini, opencode, command, ' +
        "anthropic, openai\n",
    });

    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = (listener.addr as Deno.NetAddr).port;
      run = await spawnGateway(dir, ["serve"], { SVC_GATEWAY_PORT: String(port) }).exited;
      assert.equal(run.code, 1);
      assert.equal(
        run.stderr,
        `council-gateway: cannot listen on 127.0.0.1:${port}: address already in use\n`,
      );
    } finally {
      listener.close();
    }
  });
});
