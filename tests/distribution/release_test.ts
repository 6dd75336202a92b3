/**
 * scripts/release.ts: the compile commands it prints (`deno task compile --dry-run`), the
 * packaging it really runs on fake binaries, and its SHA256SUMS.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  archiveName,
  binaryName,
  checkVersion,
  formatSha256Sums,
  parseRunTask,
  parseSha256Sums,
  sha256File,
  TARGETS,
} from "../../scripts/release.ts";
import { VERSION } from "../../src/base/version.ts";
import { REPO_ROOT, run, which, withTempDir } from "../support/tool_runs.ts";

const denoJson = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json")));

/** The start task's flags, cut out of the task string independently of scripts/release.ts. */
function startTaskFlags(): string {
  const match = /^deno run (.*) main\.ts serve$/.exec(denoJson.tasks.start);
  assert.ok(match, `unexpected start task shape: ${denoJson.tasks.start}`);
  return match[1];
}

function compileTask(args: string[]) {
  return run(Deno.execPath(), ["task", "--quiet", "compile", ...args]);
}

Deno.test("compile --dry-run prints, per target, deno compile with exactly the start task's flags", async () => {
  const { code, stdout, stderr } = await compileTask(["--dry-run"]);
  assert.equal(code, 0, stderr);
  const compileLines = stdout.split("\n").filter((line) => line.startsWith("deno compile "));
  assert.deepEqual(
    compileLines,
    TARGETS.map((target) => {
      const exe = target.includes("windows") ? ".exe" : "";
      return `deno compile ${startTaskFlags()} --target ${target} ` +
        `--output dist/council-gateway-${target}${exe} main.ts`;
    }),
  );
});

Deno.test("compile --dry-run prints the packaging steps and one SHA256SUMS over all archives", async () => {
  const { code, stdout } = await compileTask(["--dry-run"]);
  assert.equal(code, 0);
  for (const target of TARGETS) {
    const stage = `dist/stage-${target}`;
    const archive = target.includes("windows")
      ? `zip -q -j dist/council-gateway-${target}.zip ${stage}/council-gateway.exe ` +
        `${stage}/README.md ${stage}/LICENSE`
      : `tar -czf dist/council-gateway-${target}.tar.gz -C ${stage} ` +
        `council-gateway README.md LICENSE`;
    assert.ok(stdout.includes(archive), `missing: ${archive}`);
  }
  const sums = stdout.split("\n").find((line) => line.endsWith("> dist/SHA256SUMS"));
  const archives = TARGETS.map(archiveName).sort();
  assert.equal(sums, `(cd dist && sha256sum ${archives.join(" ")}) > dist/SHA256SUMS`);
});

Deno.test("compile --dry-run --target limits the plan to that target and writes nothing", async () => {
  const { code, stdout } = await compileTask(["--dry-run", "--target", "aarch64-apple-darwin"]);
  assert.equal(code, 0);
  const compiled = stdout.split("\n").filter((line) => line.startsWith("deno compile "));
  assert.equal(compiled.length, 1);
  assert.match(
    compiled[0],
    / --target aarch64-apple-darwin --output dist\/council-gateway-aarch64-apple-darwin main\.ts$/,
  );
  assert.ok(!stdout.includes("x86_64"), "other targets leaked into the plan");
});

Deno.test("compile refuses an unknown target with a usage error (exit 2)", async () => {
  const { code, stderr } = await compileTask(["--dry-run", "--target", "riscv64-linux"]);
  assert.equal(code, 2);
  assert.match(stderr, /unknown target riscv64-linux/);
});

Deno.test("compile --expect-version accepts the tag of deno.json's version and refuses another", async () => {
  const ok = await compileTask(["--dry-run", "--expect-version", `v${denoJson.version}`]);
  assert.equal(ok.code, 0, ok.stderr);
  const bad = await compileTask(["--dry-run", "--expect-version", "v999.0.0"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /release tag v999\.0\.0 does not match deno\.json version/);
  assert.throws(() => checkVersion("1.2.3", { version: VERSION, tasks: {} }), /does not match/);
});

Deno.test("parseRunTask splits flags, entry and args; only permission and V8 flags pass", () => {
  assert.deepEqual(parseRunTask("deno run --allow-net --allow-read=/tmp main.ts serve --x"), {
    flags: ["--allow-net", "--allow-read=/tmp"],
    entry: "main.ts",
    args: ["serve", "--x"],
  });
  assert.deepEqual(
    parseRunTask("deno run --v8-flags=--max-semi-space-size=2,--max-old-space-size=512 -A main.ts"),
    {
      flags: ["--v8-flags=--max-semi-space-size=2,--max-old-space-size=512", "-A"],
      entry: "main.ts",
      args: [],
    },
  );
  assert.throws(() => parseRunTask("deno run --watch --allow-net main.ts"), /--watch/);
  assert.throws(() => parseRunTask("deno run --v8-flags --allow-net main.ts"), /--v8-flags/);
  assert.throws(() => parseRunTask("deno run --inspect --allow-net main.ts"), /--inspect/);
  assert.throws(() => parseRunTask("deno test --allow-net"), /deno run/);
  assert.throws(() => parseRunTask("deno run --allow-net"), /no entry point/);
});

Deno.test("SHA256SUMS lines round-trip and accept sha256sum's binary-mode marker", () => {
  const a = "a".repeat(64);
  const b = "B".repeat(64);
  const text = formatSha256Sums(new Map([["z.zip", a], ["a.tar.gz", b.toLowerCase()]]));
  assert.equal(text, `${"b".repeat(64)}  a.tar.gz\n${a}  z.zip\n`);
  assert.deepEqual(parseSha256Sums(text), new Map([["a.tar.gz", "b".repeat(64)], ["z.zip", a]]));
  assert.deepEqual(parseSha256Sums(`${b} *x.tar.gz\n`), new Map([["x.tar.gz", "b".repeat(64)]]));
  assert.throws(() => parseSha256Sums("not a checksum line\n"), /malformed/);
});

const tar = await which("tar");
const zip = await which("zip");
const unzip = await which("unzip");
const sha256sum = await which("sha256sum");

Deno.test({
  name:
    "compile --skip-compile packages archives (binary + README + LICENSE) that sha256sum -c and install.sh accept",
  ignore: !tar || !zip || !unzip || !sha256sum,
  fn: () =>
    withTempDir(async (out) => {
      const targets = ["x86_64-unknown-linux-gnu", "x86_64-pc-windows-msvc"] as const;
      for (const target of targets) {
        await Deno.writeTextFile(join(out, binaryName(target)), `#!/bin/sh\necho ${target}\n`);
      }
      const args = ["--skip-compile", "--out-dir", out, ...targets.flatMap((t) => ["--target", t])];
      const { code, stderr } = await compileTask(args);
      assert.equal(code, 0, stderr);

      const listing = await run("tar", ["-tzf", join(out, archiveName(targets[0]))]);
      assert.deepEqual(listing.stdout.trim().split("\n").sort(), [
        "LICENSE",
        "README.md",
        "council-gateway",
      ]);
      const verbose = await run("tar", ["-tvzf", join(out, archiveName(targets[0]))]);
      assert.match(verbose.stdout, /^-rwxr-xr-x .* council-gateway$/m, "binary not executable");

      const zipped = await run("unzip", ["-Z1", join(out, archiveName(targets[1]))]);
      assert.deepEqual(zipped.stdout.trim().split("\n").sort(), [
        "LICENSE",
        "README.md",
        "council-gateway.exe",
      ]);

      const sums = parseSha256Sums(await Deno.readTextFile(join(out, "SHA256SUMS")));
      assert.deepEqual([...sums.keys()].sort(), targets.map(archiveName).sort());
      for (const [name, hex] of sums) assert.equal(hex, await sha256File(join(out, name)));
      const check = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: out });
      assert.equal(check.code, 0, check.stdout + check.stderr);
      const leftovers = [...Deno.readDirSync(out)].filter((e) => e.name.startsWith("stage-"));
      assert.deepEqual(leftovers, [], "staging dirs left behind");

      // The installer takes exactly what the release produced.
      const installed = await run("/bin/sh", [join(REPO_ROOT, "scripts/install.sh")], {
        env: {
          PREFIX: join(out, "prefix"),
          COUNCIL_GATEWAY_BASE_URL: out,
          COUNCIL_GATEWAY_OS: "Linux",
          COUNCIL_GATEWAY_ARCH: "x86_64",
        },
      });
      assert.equal(installed.code, 0, installed.stderr);
      const binary = join(out, "prefix", "bin", "council-gateway");
      assert.equal((await run(binary, [])).stdout.trim(), targets[0]);
    }),
});
