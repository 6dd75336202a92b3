/**
 * `.ci/run` against fake `npx` / `deno` executables: it must put the npx-installed deno on PATH,
 * run check and test, and end with "N passed, N failed" from Deno's real summary line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir, writeScript } from "../support/temp_scripts.ts";
import { PINNED_VERSIONS } from "../e2e/host_versions.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

interface Scenario {
  testOutput: string;
  testExit?: number;
  checkExit?: number;
}

async function runCi(scenario: Scenario): Promise<{ code: number; lines: string[] }> {
  await using dir = await tempDir();
  const denoDir = join(dir.path, "deno-bin");
  await Deno.mkdir(denoDir);
  const fakeDeno = await writeScript(
    denoDir,
    "deno",
    [
      'case "$1 $2" in',
      '  "--version ") echo "deno 2.9.6 (fake)" ;;',
      '  "task check") echo "checked"; exit "$FAKE_CHECK_EXIT" ;;',
      '  "task test") printf "%b" "$FAKE_TEST_OUTPUT"; exit "$FAKE_TEST_EXIT" ;;',
      '  *) echo "unexpected: $*" >&2; exit 99 ;;',
      "esac",
    ].join("\n"),
  );
  const npxDir = join(dir.path, "npx-bin");
  await Deno.mkdir(npxDir);
  // npx must be asked for the pinned version.
  await writeScript(
    npxDir,
    "npx",
    `[ "$1 $2" = "-y deno@2.9.6" ] || { echo "bad npx call: $*" >&2; exit 98; }\necho "${fakeDeno}"`,
  );
  const output = await new Deno.Command("bash", {
    args: [join(ROOT, ".ci/run")],
    clearEnv: true,
    env: {
      PATH: `${npxDir}:/usr/bin:/bin`,
      TMPDIR: dir.path,
      COUNCIL_CI_SKIP_EXTRAS: "1",
      FAKE_TEST_OUTPUT: scenario.testOutput,
      FAKE_TEST_EXIT: String(scenario.testExit ?? 0),
      FAKE_CHECK_EXIT: String(scenario.checkExit ?? 0),
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.ok(!stderr.includes("bad npx call") && !stderr.includes("unexpected:"), stderr);
  assert.ok(stdout.includes("deno 2.9.6 (fake)"), "the npx-installed deno is the one on PATH");
  return { code: output.code, lines: stdout.trimEnd().split("\n") };
}

Deno.test(".ci/run: a green run ends with the counts and exits 0", async () => {
  const run = await runCi({
    testOutput: "running 3 tests\\n\\nok | 12 passed (3 steps) | 0 failed (2s)\\n",
  });
  assert.equal(run.code, 0);
  assert.equal(run.lines.at(-1), "12 passed, 0 failed");
});

Deno.test(".ci/run: failures and ignored tests are reported and exit non-zero", async () => {
  const run = await runCi({
    testOutput:
      "\\0033[31mFAILED\\0033[0m | 10 passed | 2 failed | 1 ignored (2s)\\n\\nerror: Test failed\\n",
    testExit: 1,
  });
  assert.equal(run.code, 1);
  assert.equal(run.lines.at(-1), "10 passed, 2 failed, 1 skipped");
});

Deno.test(".ci/run: a failed check fails the run even when tests pass", async () => {
  const run = await runCi({ testOutput: "ok | 5 passed | 0 failed (1s)\\n", checkExit: 1 });
  assert.equal(run.code, 1);
  assert.equal(run.lines.at(-1), "5 passed, 0 failed");
});

Deno.test(".ci/run: no summary (e.g. a type error) is a failure", async () => {
  const run = await runCi({ testOutput: "error: Type checking failed.\\n", testExit: 1 });
  assert.equal(run.code, 1);
  assert.equal(run.lines.at(-1), "0 passed, 0 failed");
});

Deno.test(".ci/run installs the CLI versions the real-CLI tests pin", async () => {
  const script = await Deno.readTextFile(join(ROOT, ".ci/run"));
  const pinned = (name: string) => script.match(new RegExp(`^${name}="([^"]+)"$`, "m"))?.[1];
  assert.equal(pinned("CLAUDE_CODE_VERSION"), PINNED_VERSIONS.claude);
  assert.equal(pinned("CLAUDE_CODE_OLD_VERSION"), PINNED_VERSIONS.claudeOld);
  assert.equal(pinned("CODEX_VERSION"), PINNED_VERSIONS.codex);
  assert.equal(pinned("CODEX_OLD_VERSION"), PINNED_VERSIONS.codexOld);
  assert.equal(pinned("GEMINI_VERSION"), PINNED_VERSIONS.gemini);
});
