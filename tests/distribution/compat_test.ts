/**
 * `deno task compat` with a fake installer and a fake test run (no network): it installs the
 * versions asked for (named, newest or pinned) into one directory per combination, points the
 * real-CLI tests at them, prints a scenario × CLI-version table, and fails visibly.
 */
import assert from "node:assert/strict";
import {
  cliOf,
  type CompatDeps,
  PACKAGES,
  parseCompatArgs,
  parseReport,
  pinnedVersionOf,
  runCompat,
  TEST_FILES,
} from "../../scripts/compat.ts";
import { PINNED_VERSIONS } from "../e2e/host_versions.ts";

const REPORT = [
  "running 2 tests from ./tests/e2e/hosts_test.ts",
  "claude code 9.9.9: tool loop — host runs Read ... \x1b[32mok\x1b[0m (2s)",
  "codex 1.2.3: exec gets the council's answer ... FAILED (1s)",
  "claude code 2.1.197: tool loop — host runs Read ... ignored (0ms)",
  "real gemini: a child answers ... ok (3s)",
  "",
  "FAILED | 2 passed | 1 failed | 1 ignored (6s)",
].join("\n");

function fakeDeps(report = REPORT) {
  const calls = {
    latest: [] as string[],
    installs: [] as { dir: string; specs: string[] }[],
    runs: [] as { files: readonly string[]; env: Record<string, string> }[],
    printed: [] as string[],
  };
  const deps: CompatDeps = {
    latest(pkg) {
      calls.latest.push(pkg);
      return Promise.resolve(
        { [PACKAGES.claude]: "9.9.9", [PACKAGES.codex]: "1.2.3" }[pkg] ?? "0.99.0",
      );
    },
    install(dir, specs) {
      calls.installs.push({ dir, specs });
      return Promise.resolve();
    },
    runTests(files, env) {
      calls.runs.push({ files, env });
      return Promise.resolve(report);
    },
    print: (line) => calls.printed.push(line),
  };
  return { deps, calls };
}

Deno.test("compat: --latest installs the newest of each CLI and runs the real-CLI tests against them", async () => {
  const { deps, calls } = fakeDeps();
  const code = await runCompat(parseCompatArgs(["--latest", "--dir", "/cache"]), deps);
  assert.equal(code, 1, "a failed scenario fails the run");
  assert.deepEqual(calls.latest, [PACKAGES.claude, PACKAGES.codex, PACKAGES.gemini]);
  assert.deepEqual(calls.installs, [{
    dir: "/cache/claude-9.9.9_codex-1.2.3_gemini-0.99.0",
    specs: [
      "@anthropic-ai/claude-code@9.9.9",
      "@openai/codex@1.2.3",
      "@google/gemini-cli@0.99.0",
    ],
  }]);
  assert.deepEqual(calls.runs[0].files, TEST_FILES);
  assert.deepEqual(calls.runs[0].env, {
    COUNCIL_TEST_CLI_DIR: "/cache/claude-9.9.9_codex-1.2.3_gemini-0.99.0",
    COUNCIL_TEST_CLAUDE_VERSION: "9.9.9",
    COUNCIL_TEST_CODEX_VERSION: "1.2.3",
    COUNCIL_TEST_GEMINI_VERSION: "0.99.0",
  });
  const table = calls.printed.join("\n");
  assert.match(table, /^\| scenario \| claude 9\.9\.9 \| codex 1\.2\.3 \| gemini 0\.99\.0 \|$/m);
  assert.match(table, /^\| claude code 9\.9\.9: tool loop — host runs Read \| ok \| {2}\| {2}\|$/m);
  assert.match(
    table,
    /^\| codex 1\.2\.3: exec gets the council's answer \| {2}\| FAILED \| {2}\|$/m,
  );
  assert.ok(!table.includes("2.1.197"), "an older pin's scenario is not this column's");
  assert.match(table, /^\| real gemini: a child answers \| {2}\| {2}\| ok \|$/m);
  assert.match(calls.printed.at(-1)!, /4 scenarios, 1 failed/);
});

Deno.test("compat: named versions win, the pins fill the rest, and a clean run exits 0", async () => {
  const { deps, calls } = fakeDeps("claude code 2.0.0: x ... ok (1s)\n");
  const code = await runCompat(parseCompatArgs(["--claude", "2.0.0", "--dir", "/c"]), deps);
  assert.equal(code, 0);
  assert.deepEqual(calls.latest, [], "no registry look-up without --latest");
  assert.deepEqual(calls.installs[0].specs, [
    "@anthropic-ai/claude-code@2.0.0",
    `@openai/codex@${PINNED_VERSIONS.codex}`,
    `@google/gemini-cli@${PINNED_VERSIONS.gemini}`,
  ]);
});

Deno.test("compat: a failed install or a run with no report fails visibly", async () => {
  const broken = fakeDeps();
  broken.deps.install = () => Promise.reject(new Error("E404 no such version"));
  assert.equal(await runCompat(parseCompatArgs(["--codex", "0.0.1"]), broken.deps), 1);
  assert.match(broken.calls.printed.join("\n"), /install failed: E404 no such version/);
  assert.equal(broken.calls.runs.length, 0);

  const silent = fakeDeps("error: Module not found\n");
  assert.equal(await runCompat(parseCompatArgs([]), silent.deps), 1);
  assert.match(silent.calls.printed.join("\n"), /no test report/);
});

Deno.test("compat: arguments — a version must look like one; unknown flags are refused", () => {
  assert.throws(() => parseCompatArgs(["--claude", "latest; rm -rf"]), /--claude: not a version/);
  assert.throws(() => parseCompatArgs(["--cluade", "1.0.0"]));
  assert.equal(parseCompatArgs([], "/home/u").dir, "/home/u/.cache/council-gateway-compat");
});

Deno.test("compat: reports and scenario names are read as Deno and our tests write them", () => {
  assert.equal(pinnedVersionOf("claude code 2.1.197: tool loop"), "2.1.197");
  assert.equal(pinnedVersionOf("codex: with supports_websockets"), undefined);
  const outcomes = parseReport(REPORT);
  assert.equal(outcomes.size, 4);
  assert.equal(outcomes.get("claude code 2.1.197: tool loop — host runs Read"), "skipped");
  assert.equal(cliOf("real codex, read-only: apply_patch writes nothing"), "codex");
  assert.equal(cliOf("claude code 2.1.332: the session key stays the same"), "claude");
  assert.equal(cliOf("codex: with supports_websockets, one upgrade"), "codex");
  assert.equal(cliOf("models: a list"), undefined);
});

Deno.test("compat: every test file it runs exists", async () => {
  const root = new URL("../../", import.meta.url).pathname;
  for (const file of TEST_FILES) {
    assert.ok((await Deno.stat(`${root}${file}`)).isFile, file);
  }
});
