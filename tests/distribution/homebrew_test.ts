/**
 * scripts/homebrew.ts: the formula is valid Ruby (`ruby -c`) and, evaluated per platform with a
 * stand-in for Homebrew's DSL, selects the right URL and checksum from a sample SHA256SUMS.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { renderFormula } from "../../scripts/homebrew.ts";
import { archiveName, DEFAULT_REPO, formatSha256Sums, TARGETS } from "../../scripts/release.ts";
import { REPO_ROOT, run, skipNotice, which, withTempDir } from "../support/tool_runs.ts";

const PROBE = join(REPO_ROOT, "tests/distribution/fixtures/formula_probe.rb");
const ruby = await which("ruby");
if (!ruby) {
  skipNotice(
    "Homebrew formula Ruby checks",
    "`ruby` is not installed (Debian: apt-get install -y ruby; .ci/run should install it)",
  );
}

/** A distinct fake checksum per asset, so a swapped URL/sha pair cannot pass. */
const SAMPLE_SUMS = new Map(
  TARGETS.map((target, i) => [archiveName(target), String(i + 1).repeat(64)] as const),
);

async function writeFormula(dir: string, args: string[] = []) {
  const sumsPath = join(dir, "SHA256SUMS");
  await Deno.writeTextFile(sumsPath, formatSha256Sums(SAMPLE_SUMS));
  const out = join(dir, "Formula/council-gateway.rb");
  const result = await run(Deno.execPath(), [
    "run",
    "--allow-read",
    "--allow-write",
    "scripts/homebrew.ts",
    "v1.2.3",
    sumsPath,
    "--out",
    out,
    ...args,
  ]);
  assert.equal(result.code, 0, result.stderr);
  return out;
}

interface ProbeRecord {
  urls: string[];
  sha256s: string[];
  installed: string[];
  test_commands: string[];
  version: string;
  license: string;
  homepage: string;
  service: { run: string[]; keep_alive: boolean; environment: Record<string, string> };
}

async function probe(os: string, cpu: string, formula: string): Promise<ProbeRecord> {
  const result = await run("ruby", [PROBE, os, cpu, formula]);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

Deno.test({
  name: "the generated formula is valid Ruby (ruby -c)",
  ignore: !ruby,
  fn: () =>
    withTempDir(async (dir) => {
      const formula = await writeFormula(dir);
      const { code, stdout, stderr } = await run("ruby", ["-c", formula]);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /Syntax OK/);
    }),
});

Deno.test({
  name: "the formula picks each platform's release URL and checksum from SHA256SUMS",
  ignore: !ruby,
  fn: () =>
    withTempDir(async (dir) => {
      const formula = await writeFormula(dir, ["--repo", "acme/gateway"]);
      const expected = [
        ["macos", "arm", "aarch64-apple-darwin"],
        ["macos", "intel", "x86_64-apple-darwin"],
        ["linux", "arm", "aarch64-unknown-linux-gnu"],
        ["linux", "intel", "x86_64-unknown-linux-gnu"],
      ] as const;
      for (const [os, cpu, target] of expected) {
        const record = await probe(os, cpu, formula);
        const asset = `council-gateway-${target}.tar.gz`;
        assert.deepEqual(record.urls, [
          `https://github.com/acme/gateway/releases/download/v1.2.3/${asset}`,
        ], `${os}/${cpu}`);
        assert.deepEqual(record.sha256s, [SAMPLE_SUMS.get(asset)], `${os}/${cpu}`);
        assert.equal(record.version, "1.2.3");
        assert.equal(record.homepage, "https://github.com/acme/gateway");
      }
    }),
});

Deno.test({
  name: "the formula installs the binary, tests `council-gateway version`, serves `serve`",
  ignore: !ruby,
  fn: () =>
    withTempDir(async (dir) => {
      const record = await probe("macos", "arm", await writeFormula(dir));
      assert.deepEqual(record.installed, ["council-gateway"]);
      assert.deepEqual(record.test_commands, ["/BIN/council-gateway version"]);
      assert.deepEqual(record.service.run, ["/OPT/bin/council-gateway", "serve"]);
      assert.equal(record.service.keep_alive, true);
      assert.equal(record.license, "MIT");
      assert.equal(record.homepage, `https://github.com/${DEFAULT_REPO}`);
    }),
});

Deno.test("renderFormula refuses a missing checksum, a bad version and a bad repo", () => {
  const sums = new Map(SAMPLE_SUMS);
  sums.delete(archiveName("aarch64-apple-darwin"));
  assert.throws(
    () => renderFormula({ version: "1.0.0", repo: "a/b", sums }),
    /no entry for council-gateway-aarch64-apple-darwin\.tar\.gz/,
  );
  assert.throws(
    () => renderFormula({ version: '1.0.0"; system("x")', repo: "a/b", sums: SAMPLE_SUMS }),
    /not a release version/,
  );
  assert.throws(
    () => renderFormula({ version: "1.0.0", repo: "a/b c", sums: SAMPLE_SUMS }),
    /not an owner\/name/,
  );
});

Deno.test("homebrew.ts without arguments prints usage and exits 2", async () => {
  const { code, stderr } = await run(Deno.execPath(), [
    "run",
    "--allow-read",
    "--allow-write",
    "scripts/homebrew.ts",
  ]);
  assert.equal(code, 2);
  assert.match(stderr, /usage: homebrew\.ts <version> <SHA256SUMS path>/);
});
