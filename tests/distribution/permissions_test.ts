/**
 * The compiled binary's flags (permissions, V8 tuning): derived from `deno task start`, identical
 * to it, and enough for the app (run through `deno run --no-prompt` with exactly those flags,
 * since our machines cannot build the binary itself). Also: the embedded version and the absence
 * of run-time reads beside the source tree, which a compiled binary would not have.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { compileArgs, compileFlags, INCLUDES, parseRunTask } from "../../scripts/release.ts";
import { VERSION } from "../../src/base/version.ts";
import { REPO_ROOT, run, withTempDir } from "../support/tool_runs.ts";

const denoJson = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json")));
const FLAGS = compileFlags(denoJson);
const PERMISSION_FAILURE =
  /NotCapable|PermissionDenied|Requires \w+ access|run again with the --allow-/;

Deno.test("compile flags are exactly the start task's flags, in order", () => {
  const start: string = denoJson.tasks.start;
  assert.equal(start, `deno run ${FLAGS.join(" ")} main.ts serve`);
  const compile = compileArgs("x86_64-unknown-linux-gnu", FLAGS, "dist");
  assert.deepEqual(compile.slice(1, 1 + FLAGS.length), FLAGS);
  const beforeEntry = compile.slice(1, compile.indexOf("--target"));
  assert.deepEqual(beforeEntry, FLAGS, "compile carries flags the start task does not");
});

Deno.test("the start task's V8 flags are compiled into the binary", () => {
  const v8Flags = FLAGS.filter((flag) => flag.startsWith("--v8-flags="));
  assert.equal(v8Flags.length, 1, `start task: ${denoJson.tasks.start}`);
  const compile = compileArgs("x86_64-unknown-linux-gnu", FLAGS, "dist");
  assert.ok(compile.includes(v8Flags[0]), `deno compile lacks ${v8Flags[0]}`);
});

Deno.test("deno task dev runs with the start task's flags plus --watch", () => {
  const dev = parseRunTask(String(denoJson.tasks.dev).replace(" --watch", ""));
  assert.ok(String(denoJson.tasks.dev).includes(" --watch "), "dev task lost --watch");
  assert.deepEqual(dev, parseRunTask(denoJson.tasks.start));
});

Deno.test("src/base/version.ts VERSION equals deno.json version", () => {
  assert.equal(VERSION, denoJson.version);
});

/**
 * What breaks inside a compiled binary: locating files next to the module (there is no source
 * tree unless embedded with --include), Deno.execPath() (it is the binary, not deno), workers.
 */
const SOURCE_TREE_ASSUMPTION =
  /import\.meta\.(dirname|filename|url|resolve)\b|Deno\.execPath\(|new Worker\(/;
/** Deno.execPath() is right in code that tells a compiled binary (then it is the binary) apart. */
const SOURCE_TREE_ASSUMPTION_BUT_EXEC_PATH =
  /import\.meta\.(dirname|filename|url|resolve)\b|new Worker\(/;
const TELLS_COMPILED_APART = /Deno\.build\.standalone/;

Deno.test("runtime code assumes neither a source tree nor a deno executable (compiled binary)", async () => {
  const offenders: string[] = [];
  const sources = [join(REPO_ROOT, "main.ts"), ...await listTs(join(REPO_ROOT, "src"))];
  for (const file of sources) {
    const text = await Deno.readTextFile(file);
    const assumes = TELLS_COMPILED_APART.test(text)
      ? SOURCE_TREE_ASSUMPTION_BUT_EXEC_PATH
      : SOURCE_TREE_ASSUMPTION;
    if (assumes.test(text)) {
      offenders.push(relative(REPO_ROOT, file));
    }
  }
  assert.deepEqual(
    offenders,
    [],
    `${offenders.join(", ")} assume a source tree or a deno executable, which the compiled ` +
      `binary lacks: embed files via INCLUDES in scripts/release.ts (now ` +
      `${JSON.stringify(INCLUDES)}) and adjust this test`,
  );
});

async function listTs(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...await listTs(path));
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

/** Environment for the app: no SVC_* from the developer, config dirs inside a temp dir. */
function appEnv(home: string): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([key]) => !key.startsWith("SVC_")),
  );
  return { ...env, XDG_CONFIG_HOME: join(home, "config"), TMPDIR: home, NO_COLOR: "1" };
}

/** `deno run --no-prompt <exactly the compile flags> main.ts …args` from a foreign cwd. */
function denoRunArgs(args: string[]): string[] {
  return [
    "run",
    "--no-prompt",
    "--config",
    join(REPO_ROOT, "deno.json"),
    ...FLAGS,
    join(REPO_ROOT, "main.ts"),
    ...args,
  ];
}

async function writeConfig(dir: string): Promise<string> {
  const path = join(dir, "council.yaml");
  await Deno.writeTextFile(
    path,
    [
      "host: 127.0.0.1",
      "port: 0",
      "defaultAgents:",
      "  - runner: command",
      "    model: fake-model",
      "    command: cat",
      "",
    ].join("\n"),
  );
  return path;
}

function assertNoPermissionFailure(label: string, stderr: string): void {
  assert.doesNotMatch(stderr, PERMISSION_FAILURE, `${label} hit a permission check:\n${stderr}`);
}

/** Subcommands that finish on their own; `covers` names the effects they exercise. */
const COMMANDS: { args: (config: string) => string[]; stdout: RegExp; covers: string }[] = [
  {
    args: () => ["version"],
    stdout: new RegExp(VERSION.replaceAll(".", "\\.")),
    covers: "no config",
  },
  { args: () => ["--help"], stdout: /Usage:/, covers: "no config" },
  { args: (c) => ["config", "--config", c], stdout: /fake-model/, covers: "config file, env" },
  {
    args: (c) => ["connect", "claude", "--config", c, "--port", "6767"],
    stdout: /ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:6767/,
    covers: "config file, env",
  },
  {
    args: (c) => ["doctor", "--config", c],
    stdout: /\/cat\b/,
    covers: "agent CLI lookup on PATH, test bind",
  },
];

for (const command of COMMANDS) {
  const label = command.args("FILE").join(" ");
  Deno.test(`the app runs \`${label}\` with the compile permission set (${command.covers})`, () =>
    withTempDir(async (home) => {
      const config = await writeConfig(home);
      const result = await run(Deno.execPath(), denoRunArgs(command.args(config)), {
        cwd: home,
        env: appEnv(home),
      });
      assertNoPermissionFailure(label, result.stdout + result.stderr);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(result.stdout, command.stdout);
    }));
}

Deno.test("the app serves (binds, answers /v1/models) with the compile permission set", () =>
  withTempDir(async (home) => {
    const config = await writeConfig(home);
    const child = new Deno.Command(Deno.execPath(), {
      args: denoRunArgs(["serve", "--config", config, "--port", "0"]),
      cwd: home,
      env: appEnv(home),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderrText = new Response(child.stderr).text();
    let port: number | undefined;
    let seen = "";
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      while (port === undefined) {
        const { value, done } = await lines.read();
        if (done) break;
        seen += value;
        const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen);
        if (match) port = Number(match[1]);
      }
      if (port !== undefined) {
        const response = await fetch(`http://127.0.0.1:${port}/v1/models`);
        const body = await response.json();
        assert.equal(response.status, 200);
        assert.ok(JSON.stringify(body).includes("svc-council"));
      }
    } finally {
      await lines.cancel();
      try {
        child.kill("SIGTERM");
      } catch { /* already exited */ }
      await child.status;
    }
    const stderr = await stderrText;
    assertNoPermissionFailure("serve", seen + stderr);
    assert.ok(port !== undefined, `serve never printed its listening line:\n${seen}\n${stderr}`);
  }));
