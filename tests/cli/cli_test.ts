import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { type CliIo, HELP, runCli } from "../../src/cli/mod.ts";
import { probeVersion } from "../../src/cli/doctor.ts";
import { VERSION } from "../../src/base/version.ts";
import { envOf, tempDir, writeFile, writeScript } from "../support/temp_scripts.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(
  argv: string[],
  env: Record<string, string> = {},
  cwd = "/nonexistent-dir-for-tests",
): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    env: envOf({ PATH: "", ...env }),
    cwd,
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

const TOKEN = "cli-Secret-7777";

Deno.test("cli: version and help", async () => {
  assert.deepEqual(await cli(["version"]), {
    code: 0,
    stdout: `council-gateway ${VERSION}\n`,
    stderr: "",
  });
  assert.equal((await cli(["--version"])).stdout, `council-gateway ${VERSION}\n`);
  assert.equal((await cli(["--help"])).stdout, HELP.main);
  assert.equal((await cli(["-h"])).stdout, HELP.main);
  for (const command of ["serve", "doctor", "connect", "config", "version"]) {
    const run = await cli([command, "--help"]);
    assert.equal(run.code, 0);
    assert.equal(run.stdout, HELP[command]);
    assert.match(run.stdout, new RegExp(`^Usage: council-gateway`));
  }
});

Deno.test("cli: usage errors exit 2 with one line on stderr", async () => {
  const cases: [string[], string][] = [
    [["bogus"], `council-gateway: unknown command "bogus" (see 'council-gateway --help')\n`],
    [["--nope"], `council-gateway: unknown option --nope (see 'council-gateway --help')\n`],
    [
      ["serve", "--port", "http"],
      `council-gateway: --port: "http" is not a port number (0-65535) (see 'council-gateway --help')\n`,
    ],
    [
      ["serve", "--config"],
      `council-gateway: option --config needs a value (see 'council-gateway --help')\n`,
    ],
    [
      ["connect"],
      `council-gateway: connect: which host? connect claude | connect codex (see 'council-gateway connect --help')\n`,
    ],
    [
      ["connect", "gemini"],
      `council-gateway: connect: unknown host "gemini" (expected claude or codex) (see 'council-gateway connect --help')\n`,
    ],
    [
      ["version", "extra"],
      `council-gateway: version: unexpected argument extra (see 'council-gateway version --help')\n`,
    ],
  ];
  for (const [argv, stderr] of cases) {
    assert.deepEqual(await cli(argv), { code: 2, stdout: "", stderr }, argv.join(" "));
  }
});

Deno.test("cli: a config error exits 2 with the precise message and no stack", async () => {
  await using dir = await tempDir();
  const path = await writeFile(
    dir.path,
    "c.yaml",
    "defaultAgents:\n  - { runner: claude, model: a }\n  - { runner: cladue, model: b }\n",
  );
  for (const command of ["serve", "config", "doctor", "connect"]) {
    const argv = command === "connect" ? [command, "claude"] : [command];
    const run = await cli([...argv, "--config", path]);
    assert.deepEqual(run, {
      code: 2,
      stdout: "",
      stderr: 'config: defaultAgents[1].runner: "cladue" is not one of claude, codex, gemini, ' +
        "opencode, command, anthropic, openai\n",
    }, command);
  }
});

Deno.test("cli: serve refuses an unauthenticated non-loopback bind with exit 2", async () => {
  const run = await cli(["serve", "--host", "0.0.0.0", "--port", "0"]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^config: host: "0\.0\.0\.0" is reachable from other machines/);
  assert.equal(run.stderr.split("\n").length, 2);
});

Deno.test("cli: serve refuses a non-loopback bind whose token is under 16 characters, exit 2", async () => {
  for (const token of ["q7", "fifteen-chars-x"]) {
    const run = await cli(["serve", "--host", "0.0.0.0", "--port", "0"], {
      SVC_GATEWAY_TOKEN: token,
    });
    assert.equal(run.code, 2, token);
    assert.match(run.stderr, /has \d+ characters; a remote bind needs at least 16/);
    assert.ok(!run.stderr.includes(token), "the token itself is not printed");
  }
});

Deno.test("cli: config prints the effective YAML with the token masked", async () => {
  await using dir = await tempDir();
  const path = await writeFile(
    dir.path,
    "council.yaml",
    "port: 7001\nfanOutPolicy: always\ndefaultAgents:\n" +
      "  - { runner: codex, model: gpt-5.5, env: { OPENAI_API_KEY: sk-xyz-123, MODE: fast } }\n",
  );
  const run = await cli(["config"], { SVC_GATEWAY_TOKEN: TOKEN, SVC_LOG_LEVEL: "warn" }, dir.path);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(!run.stdout.includes(TOKEN));
  assert.ok(!run.stdout.includes("sk-xyz-123"));
  assert.ok(run.stdout.includes(`# file: ${path}`));
  const parsed = YAML.parse(run.stdout);
  assert.equal(parsed.token, "***");
  assert.equal(parsed.port, 7001);
  assert.equal(parsed.logLevel, "warn");
  assert.equal(parsed.fanOutPolicy, "always");
  assert.equal(parsed.maxTurns, 100);
  assert.deepEqual(parsed.defaultAgents[0].env, { OPENAI_API_KEY: "***", MODE: "fast" });
  assert.equal(parsed.defaultAgents[0].name, "codex");
  // Without a token there is no token key at all.
  const open = YAML.parse((await cli(["config"], {}, dir.path)).stdout);
  assert.equal("token" in open, false);
});

Deno.test("cli: connect claude prints exports for the configured address and token", async () => {
  let run = await cli(["connect", "claude"], {
    SVC_GATEWAY_TOKEN: TOKEN,
    SVC_GATEWAY_PORT: "7100",
  });
  assert.equal(run.code, 0);
  const exports = run.stdout.split("\n").filter((l) => l.startsWith("export "));
  assert.deepEqual(exports, [
    "export ANTHROPIC_BASE_URL=http://127.0.0.1:7100",
    `export ANTHROPIC_AUTH_TOKEN=${TOKEN}`,
    "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
    // Request-class hint headers (housekeeping) and the model list (the council in /model).
    "export CLAUDE_CODE_GATEWAY_HINT_HEADERS=1",
    "export CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1",
  ]);
  // Every other line is a comment: the whole output can be eval'ed.
  assert.ok(
    run.stdout.trimEnd().split("\n").every((l) => l.startsWith("export ") || l.startsWith("#")),
  );
  // Auth off: a placeholder credential so Claude Code starts without a login.
  run = await cli(["connect", "claude", "--port", "7101"]);
  assert.match(run.stdout, /^export ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:7101$/m);
  assert.match(run.stdout, /^export ANTHROPIC_AUTH_TOKEN=council-gateway-no-auth$/m);
  // A wildcard bind is reached over loopback.
  run = await cli(["connect", "claude", "--host", "0.0.0.0"], { SVC_GATEWAY_TOKEN: "a b'c" });
  assert.match(run.stdout, /^export ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:6767$/m);
  assert.match(run.stdout, /^export ANTHROPIC_AUTH_TOKEN='a b'\\''c'$/m);
});

Deno.test("cli: connect output evaluates in a real shell", async () => {
  const token = "we$ird 'tok\"en";
  const run = await cli(["connect", "claude"], { SVC_GATEWAY_TOKEN: token });
  const out = await new Deno.Command("sh", {
    args: ["-c", `${run.stdout}\nprintf '%s|%s' "$ANTHROPIC_BASE_URL" "$ANTHROPIC_AUTH_TOKEN"`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stdout), `http://127.0.0.1:6767|${token}`);
});

Deno.test("cli: connect codex prints a config.toml provider block and the token export", async () => {
  let run = await cli(["connect", "codex", "--toml"], { SVC_GATEWAY_PORT: "7200" });
  assert.equal(run.code, 0);
  const toml = run.stdout.split("\n").filter((l) => l && !l.startsWith("#"));
  assert.deepEqual(toml, [
    'model = "gpt-5.5"',
    'model_provider = "council"',
    "[model_providers.council]",
    'name = "Council Gateway"',
    'base_url = "http://127.0.0.1:7200/v1"',
    'wire_api = "responses"',
    'env_key = "COUNCIL_GATEWAY_TOKEN"',
    // Codex's offer to switch models, marked as seen: `model` stays pinned.
    "[notice.model_migrations]",
    '"gpt-5.5" = "gpt-6-sol"',
  ]);
  assert.match(run.stdout, /Any model id works/);
  run = await cli(["connect", "codex", "--env"], { SVC_GATEWAY_TOKEN: TOKEN });
  assert.equal(run.stdout, `export COUNCIL_GATEWAY_TOKEN=${TOKEN}\n`);
  // Auth off: Codex still needs a non-empty value.
  run = await cli(["connect", "codex", "--env"]);
  assert.match(run.stdout, /^export COUNCIL_GATEWAY_TOKEN=council-gateway-no-auth$/m);
  // Without a flag: both parts.
  run = await cli(["connect", "codex"], { SVC_GATEWAY_TOKEN: TOKEN });
  assert.ok(run.stdout.includes('wire_api = "responses"'));
  assert.ok(run.stdout.includes(`export COUNCIL_GATEWAY_TOKEN=${TOKEN}`));
  assert.equal((await cli(["connect", "codex", "--toml", "--env"])).code, 2);
  assert.equal((await cli(["connect", "claude", "--toml"])).code, 2);
});

Deno.test("cli: connect refuses an ephemeral port", async () => {
  const run = await cli(["connect", "claude"], { SVC_GATEWAY_PORT: "0" });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /port is 0 \(ephemeral\)/);
});

async function doctorFixture(dir: string) {
  await writeScript(dir, "claude", 'echo "9.9.9 (Claude Code)"');
  await writeScript(dir, "codex", 'echo "codex-cli 0.1.0"; echo second line');
  const broken = await writeScript(dir, "gemini", 'echo "Error: not installed" >&2; exit 1');
  return { broken };
}

Deno.test("cli: doctor prints a table and exits 0 when everything is right", async () => {
  await using dir = await tempDir();
  await doctorFixture(dir.path);
  const config = await writeFile(
    dir.path,
    "c.yaml",
    "port: 0\ndefaultAgents:\n  - { runner: claude, model: opus }\n  - { runner: codex, model: gpt-5.5 }\n" +
      "  - { name: local, runner: command, model: m, command: cat }\n",
  );
  const run = await cli(["doctor", "--config", config], { PATH: `${dir.path}:/bin:/usr/bin` });
  assert.equal(run.code, 0, run.stdout);
  assert.match(run.stdout, new RegExp(`^config file\\s+${config}\\s+ok$`, "m"));
  assert.match(run.stdout, /^bind address\s+127\.0\.0\.1:0 \(ephemeral port\)\s+ok$/m);
  assert.match(run.stdout, /^agents\s+3 configured\s+ok$/m);
  assert.match(run.stdout, /^AGENT\s+RUNNER\s+MODEL\s+EXECUTABLE\s+VERSION\s+STATUS$/m);
  assert.match(
    run.stdout,
    new RegExp(
      `^claude\\s+claude\\s+opus\\s+${dir.path}/claude\\s+9\\.9\\.9 \\(Claude Code\\)\\s+ok$`,
      "m",
    ),
  );
  assert.match(run.stdout, /^codex\s+codex\s+gpt-5\.5\s+\S+\/codex\s+codex-cli 0\.1\.0\s+ok$/m);
  assert.match(run.stdout, /^local\s+command\s+m\s+\S+\/cat\s+-\s+ok$/m);
  assert.match(run.stdout, /doctor: all checks passed\n$/);
});

Deno.test("cli: doctor probes an opencode agent's version like the other CLIs'", async () => {
  await using dir = await tempDir();
  await writeScript(dir.path, "opencode", 'echo "1.18.33"');
  const config = await writeFile(
    dir.path,
    "c.yaml",
    "port: 0\ndefaultAgents:\n  - { runner: opencode, model: stub/m1 }\n",
  );
  const run = await cli(["doctor", "--config", config], { PATH: `${dir.path}:/bin:/usr/bin` });
  assert.equal(run.code, 0, run.stdout);
  assert.match(run.stdout, /^opencode\s+opencode\s+stub\/m1\s+\S+\/opencode\s+1\.18\.33\s+ok$/m);
});

Deno.test("cli: doctor exits 1 for a missing CLI, a failing --version and a busy port", async () => {
  await using dir = await tempDir();
  await doctorFixture(dir.path);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    const config = await writeFile(
      dir.path,
      "c.yaml",
      `port: ${port}\ndefaultAgents:\n  - { runner: claude, model: opus }\n` +
        "  - { runner: gemini, model: g }\n  - { runner: codex, model: x, command: /nope/codex }\n",
    );
    const run = await cli(["doctor", "--config", config], { PATH: dir.path });
    assert.equal(run.code, 1, run.stdout);
    assert.match(
      run.stdout,
      /^gemini\s+gemini\s+g\s+\S+\s+-\s+--version failed: exit 1: Error: not installed$/m,
    );
    assert.match(run.stdout, /^codex\s+codex\s+x\s+-\s+-\s+not found: \/nope\/codex$/m);
    assert.match(
      run.stdout,
      new RegExp(`127\\.0\\.0\\.1:${port} \\(address already in use\\)\\s+PROBLEM`),
    );
    assert.match(run.stdout, /doctor: 3 problems:\n/);
  } finally {
    listener.close();
  }
});

Deno.test("cli: doctor runs --version as a child runs: the adapter's variables and the agent's env", async () => {
  await using dir = await tempDir();
  await writeScript(dir.path, "gemini", 'echo "relaunch-off=$GEMINI_CLI_NO_RELAUNCH mark=$MARK"');
  const config = await writeFile(
    dir.path,
    "c.yaml",
    "port: 0\ndefaultAgents:\n  - { runner: gemini, model: g, env: { MARK: from-agent } }\n",
  );
  const run = await cli(["doctor", "--config", config], { PATH: `${dir.path}:/bin:/usr/bin` });
  assert.equal(run.code, 0, run.stdout);
  assert.match(run.stdout, /^gemini\s+gemini\s+g\s+\S+\s+relaunch-off=true mark=from-agent\s+ok$/m);
});

Deno.test("cli: doctor with no agents at all says so and exits 1", async () => {
  const run = await cli(["doctor", "--port", "0"]);
  assert.equal(run.code, 1);
  assert.match(
    run.stdout,
    /no agents: configure defaultAgents or install the claude, codex, gemini or opencode CLI/,
  );
  assert.match(
    run.stdout,
    /^agents\s+0 found on PATH \(defaultAgents not configured\)\s+PROBLEM$/m,
  );
});

Deno.test("doctor: probeVersion gives up on a CLI that hangs, and leaves no process", async () => {
  await using dir = await tempDir();
  const hang = await writeScript(dir.path, "hang", "exec sleep 30");
  const probe = await probeVersion(hang, 100);
  assert.deepEqual(probe, { ok: false, text: "no answer within 100 ms" });
  const missing = await probeVersion(join(dir.path, "missing"), 100);
  assert.equal(missing.ok, false);
});
