/**
 * The daemon commands against a real background gateway in a temporary state directory:
 * `start` (PID file, log file, returns once listening), `status` (config file, uptime, live
 * turns), `logs [-f] [-n]`, `restart`, `stop`, and a start that fails.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { isRunning } from "../../src/daemon/process_check.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { isolatedEnv, mainArgs, run } from "../support/gateway_process.ts";
import { eventually, within } from "../support/wait.ts";

interface Setup {
  dir: string;
  config: string;
  env: Record<string, string>;
  cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  pidFile: string;
  logFile: string;
}

async function setup(config: Record<string, unknown>): Promise<Setup> {
  const dir = await Deno.makeTempDir({ prefix: "cg-daemon-" });
  const path = join(dir, "council.yaml");
  await Deno.writeTextFile(path, YAML.stringify({ port: 0, ...config }));
  const env = isolatedEnv(dir, { XDG_STATE_HOME: join(dir, "state") });
  const cli = (...args: string[]) =>
    run(Deno.execPath(), mainArgs(...args), { cwd: dir, env, timeoutMs: 60_000 });
  const state = join(dir, "state", "council-gateway");
  return {
    dir,
    config: path,
    env,
    cli,
    pidFile: join(state, "gateway.pid"),
    logFile: join(state, "gateway.log"),
  };
}

async function cleanup(s: Setup): Promise<void> {
  try {
    const pid = Number((await Deno.readTextFile(s.pidFile)).trim());
    if (pid && isRunning(pid)) Deno.kill(pid, "SIGKILL");
  } catch { /* stopped already */ }
  await Deno.remove(s.dir, { recursive: true });
}

function slowCodex() {
  return [
    fakeAgent("claude", { reply: "claude says" }, { name: "claude" }),
    fakeAgent("codex", { reply: "codex says", delayMs: 30_000 }, { name: "codex" }),
  ];
}

Deno.test("daemon: start, status with a live turn, logs, restart, stop", async () => {
  const s = await setup({ fanOutPolicy: "always", defaultAgents: slowCodex() });
  try {
    const started = await s.cli("start", "--config", s.config);
    assert.equal(started.code, 0, started.stderr);
    const match = /started \(pid (\d+)\) on (http:\/\/127\.0\.0\.1:\d+)/.exec(started.stdout);
    assert.ok(match, started.stdout);
    const [pid, origin] = [Number(match[1]), match[2]];
    assert.equal((await Deno.readTextFile(s.pidFile)).trim(), String(pid));
    assert.ok(isRunning(pid));
    assert.match(started.stdout, new RegExp(`config: ${s.config}`));
    assert.deepEqual(await (await fetch(`${origin}/health`)).json(), {
      ok: true,
      version: "0.1.0",
    });

    const again = await s.cli("start", "--config", s.config);
    assert.equal(again.code, 0);
    assert.match(again.stdout, new RegExp(`already running \\(pid ${pid}\\)`));

    const turn = fetch(`${origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-opus-5-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "Explain the build" }],
      }),
    });
    const status = await within(
      eventually(async () => {
        const out = await s.cli("status", "--config", s.config);
        return /live turns: 1/.test(out.stdout) && /claude done/.test(out.stdout) && out;
      }, "a live turn in status"),
      "status",
      30_000,
    );
    assert.equal(status.code, 0);
    assert.match(status.stdout, new RegExp(`running \\(pid ${pid}\\) on ${origin}`));
    assert.match(status.stdout, new RegExp(`config: +${s.config}`));
    assert.match(status.stdout, /uptime: +\d+s/);
    assert.match(status.stdout, /turn \w+ \(fanout, \d+s\): claude done \d+s, codex running \d+s/);

    const logs = await s.cli("logs");
    assert.equal(logs.code, 0);
    assert.match(logs.stdout, /INFO {2}listening on http:\/\/127\.0\.0\.1:\d+ .* config=/);
    const last = await s.cli("logs", "-n", "1");
    assert.equal(last.stdout.trimEnd().split("\n").length, 1);

    const restarted = await s.cli("restart", "--config", s.config);
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stdout, new RegExp(`stopped \\(pid ${pid}\\)`));
    const newPid = Number(/started \(pid (\d+)\)/.exec(restarted.stdout)![1]);
    assert.notEqual(newPid, pid);
    assert.equal(isRunning(pid), false);
    await (await turn).body?.cancel(); // the restart ended it (after the shutdown grace)

    const stopped = await s.cli("stop");
    assert.equal(stopped.code, 0);
    assert.match(stopped.stdout, new RegExp(`stopped \\(pid ${newPid}\\)`));
    assert.equal(isRunning(newPid), false);
    await assert.rejects(Deno.stat(s.pidFile), Deno.errors.NotFound);
    const down = await s.cli("status", "--config", s.config);
    assert.equal(down.code, 3);
    assert.match(down.stdout, /is not running/);
    assert.match((await s.cli("stop")).stdout, /is not running/);
  } finally {
    await cleanup(s);
  }
});

Deno.test("daemon: logs -f prints what the gateway appends", async () => {
  const s = await setup({ defaultAgents: [fakeAgent("claude", {}, { name: "claude" })] });
  try {
    const started = await s.cli("start", "--config", s.config);
    assert.equal(started.code, 0, started.stderr);
    const origin = /on (http:\/\/\S+)/.exec(started.stdout)![1];
    const follower = new Deno.Command(Deno.execPath(), {
      args: mainArgs("logs", "-f", "-n", "0"),
      cwd: s.dir,
      clearEnv: true,
      env: s.env,
      stdout: "piped",
      stderr: "null",
      stdin: "null",
    }).spawn();
    let seen = "";
    const reader = (async () => {
      for await (const chunk of follower.stdout.pipeThrough(new TextDecoderStream())) {
        seen += chunk;
      }
    })();
    try {
      await within(eventually(() => seen.includes("listening on"), "the log so far"), "log");
      await (await fetch(`${origin}/v1/nothing-here`)).body?.cancel();
      await within(
        eventually(() => seen.includes("GET /v1/nothing-here 404"), "the appended line"),
        "follow",
      );
    } finally {
      follower.kill("SIGTERM");
      await follower.status;
      await reader;
    }
    assert.equal((await s.cli("stop")).code, 0);
  } finally {
    await cleanup(s);
  }
});

Deno.test("daemon: a start that fails says why and shows the log", async () => {
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const s = await setup({ port, defaultAgents: [fakeAgent("claude", {}, { name: "c" })] });
  try {
    const started = await s.cli("start", "--config", s.config);
    assert.equal(started.code, 1);
    assert.match(started.stderr, /start failed: the gateway exited \(code 1\)/);
    assert.match(started.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    await assert.rejects(Deno.stat(s.pidFile), Deno.errors.NotFound);
  } finally {
    await cleanup(s);
  }
});

/** A stand-in host CLI that records its arguments and environment, then exits 7. */
async function recordingHost(dir: string, name: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin, { recursive: true });
  const record = join(dir, `${name}.json`);
  await Deno.writeTextFile(
    join(bin, name),
    `#!/usr/bin/env node
require("fs").writeFileSync(${
      JSON.stringify(record)
    }, JSON.stringify({ argv: process.argv.slice(2), env: process.env }));
process.exit(7);
`,
  );
  await Deno.chmod(join(bin, name), 0o755);
  return record;
}

Deno.test("launchers: claude and codex start the gateway if need be, then run the host with connect's environment", async () => {
  const token = "launch-T0ken-1234567";
  const s = await setup({ token, defaultAgents: [fakeAgent("claude", {}, { name: "claude" })] });
  const claudeRecord = await recordingHost(s.dir, "claude");
  const codexRecord = await recordingHost(s.dir, "codex");
  s.env.PATH = `${join(s.dir, "bin")}:${s.env.PATH}`;
  try {
    const first = await s.cli("--config", s.config, "claude", "-p", "--model", "opus", "hi there");
    assert.equal(first.code, 7, "the host's exit code");
    assert.match(first.stderr, /council-gateway started \(pid \d+\) on http:\/\/127\.0\.0\.1:\d+/);
    const origin = /on (http:\/\/\S+)/.exec(first.stderr)![1];
    const claude = JSON.parse(await Deno.readTextFile(claudeRecord));
    assert.equal(claude.env.ANTHROPIC_BASE_URL, origin);
    assert.equal(claude.env.ANTHROPIC_AUTH_TOKEN, token);
    assert.equal(claude.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1");
    assert.equal(claude.argv[0], "--settings");
    const settings = JSON.parse(claude.argv[1]);
    assert.match(settings.statusLine.command, / statusline --config /);
    assert.deepEqual(claude.argv.slice(2), ["-p", "--model", "opus", "hi there"]);

    const second = await s.cli("--config", s.config, "codex", "exec", "--json", "say hi");
    assert.equal(second.code, 7);
    assert.doesNotMatch(second.stderr, /started/, "the running gateway is used");
    const codex = JSON.parse(await Deno.readTextFile(codexRecord));
    assert.equal(codex.env.COUNCIL_GATEWAY_TOKEN, token);
    assert.deepEqual(codex.argv.slice(0, 2), ["-c", 'model_provider="council"']);
    assert.equal(
      codex.argv[3],
      `model_providers.council={name="Council Gateway",base_url="${origin}/v1",` +
        'wire_api="responses",env_key="COUNCIL_GATEWAY_TOKEN"}',
    );
    assert.ok(
      codex.argv.includes('notice.model_migrations={"gpt-5.5"="gpt-6-sol"}'),
      "the model offer marked seen, so the model stays pinned",
    );
    assert.deepEqual(codex.argv.slice(-3), ["exec", "--json", "say hi"]);
    assert.equal((await s.cli("stop")).code, 0);
  } finally {
    await cleanup(s);
  }
});
