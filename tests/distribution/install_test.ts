/**
 * scripts/install.sh against a local directory of fake release assets: it picks the archive for
 * each OS/arch, verifies SHA256SUMS, installs into $PREFIX/bin, and refuses bad checksums.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  archiveName,
  DEFAULT_REPO,
  formatSha256Sums,
  sha256File,
  type Target,
  TARGETS,
} from "../../scripts/release.ts";
import { REPO_ROOT, run, skipNotice, which, withTempDir } from "../support/tool_runs.ts";

const INSTALL_SH = join(REPO_ROOT, "scripts/install.sh");
const UNIX_TARGETS = TARGETS.filter((target) => !target.includes("windows"));

/** Fake release: per unix target a tarball whose `council-gateway` prints the target name. */
async function makeAssets(dir: string): Promise<string> {
  const assets = join(dir, "assets");
  await Deno.mkdir(assets);
  const sums = new Map<string, string>();
  for (const target of UNIX_TARGETS) {
    const stage = join(dir, `stage-${target}`);
    await Deno.mkdir(stage);
    await Deno.writeTextFile(join(stage, "council-gateway"), `#!/bin/sh\necho "fake ${target}"\n`, {
      mode: 0o755,
    });
    const archive = join(assets, archiveName(target));
    const tar = await run("tar", ["-czf", archive, "-C", stage, "council-gateway"]);
    assert.equal(tar.code, 0, tar.stderr);
    sums.set(archiveName(target), await sha256File(archive));
  }
  await Deno.writeTextFile(join(assets, "SHA256SUMS"), formatSha256Sums(sums));
  return assets;
}

interface InstallRun {
  code: number;
  stdout: string;
  stderr: string;
  binary: string;
}

async function install(dir: string, env: Record<string, string>): Promise<InstallRun> {
  const prefix = join(dir, "prefix");
  const result = await run("/bin/sh", [INSTALL_SH], {
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir, PREFIX: prefix, ...env },
  });
  return { ...result, binary: join(prefix, "bin", "council-gateway") };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

const CASES: [os: string, arch: string, target: Target][] = [
  ["Linux", "x86_64", "x86_64-unknown-linux-gnu"],
  ["Linux", "amd64", "x86_64-unknown-linux-gnu"],
  ["Linux", "aarch64", "aarch64-unknown-linux-gnu"],
  ["Linux", "arm64", "aarch64-unknown-linux-gnu"],
  ["Darwin", "x86_64", "x86_64-apple-darwin"],
  ["Darwin", "arm64", "aarch64-apple-darwin"],
  ["Darwin", "aarch64", "aarch64-apple-darwin"],
  ["linux", "x86_64", "x86_64-unknown-linux-gnu"],
  ["darwin", "arm64", "aarch64-apple-darwin"],
];

Deno.test("install.sh installs the asset matching each OS/arch and says how to start", async (t) => {
  await withTempDir(async (dir) => {
    const assets = await makeAssets(dir);
    for (const [os, arch, target] of CASES) {
      await t.step(`${os} ${arch} -> ${target}`, () =>
        withTempDir(async (home) => {
          const result = await install(home, {
            COUNCIL_GATEWAY_BASE_URL: assets,
            COUNCIL_GATEWAY_OS: os,
            COUNCIL_GATEWAY_ARCH: arch,
          });
          assert.equal(result.code, 0, result.stderr);
          assert.match(result.stdout, new RegExp(`Installing council-gateway for ${target} `));
          const installed = await run(result.binary, []);
          assert.equal(installed.stdout.trim(), `fake ${target}`);
          assert.equal((await Deno.stat(result.binary)).mode! & 0o777, 0o755);
          assert.match(result.stdout, /Next steps:/);
          assert.match(result.stdout, /council-gateway doctor/);
          assert.match(result.stdout, /council-gateway serve/);
          assert.match(result.stdout, /is not on your PATH/);
        }));
    }
  });
});

Deno.test("install.sh accepts a file:// base URL and replaces an existing binary", () =>
  withTempDir(async (dir) => {
    const assets = await makeAssets(dir);
    const binDir = join(dir, "prefix", "bin");
    await Deno.mkdir(binDir, { recursive: true });
    await Deno.writeTextFile(join(binDir, "council-gateway"), "old");
    const result = await install(dir, {
      COUNCIL_GATEWAY_BASE_URL: `file://${assets}/`,
      COUNCIL_GATEWAY_OS: "Linux",
      COUNCIL_GATEWAY_ARCH: "x86_64",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal((await run(result.binary, [])).stdout.trim(), "fake x86_64-unknown-linux-gnu");
    const leftovers = [...Deno.readDirSync(binDir)].map((entry) => entry.name);
    assert.deepEqual(leftovers, ["council-gateway"]);
  }));

Deno.test("install.sh refuses a checksum mismatch and leaves the existing install alone", () =>
  withTempDir(async (dir) => {
    const assets = await makeAssets(dir);
    const asset = join(assets, archiveName("aarch64-apple-darwin"));
    await Deno.writeFile(asset, new TextEncoder().encode("tampered"), { append: true });
    const binDir = join(dir, "prefix", "bin");
    await Deno.mkdir(binDir, { recursive: true });
    await Deno.writeTextFile(join(binDir, "council-gateway"), "old");

    const result = await install(dir, {
      COUNCIL_GATEWAY_BASE_URL: assets,
      COUNCIL_GATEWAY_OS: "Darwin",
      COUNCIL_GATEWAY_ARCH: "arm64",
    });
    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /checksum mismatch for council-gateway-aarch64-apple-darwin\.tar\.gz/,
    );
    assert.match(result.stderr, /refusing to install/);
    assert.equal(await Deno.readTextFile(result.binary), "old");
    assert.deepEqual([...Deno.readDirSync(binDir)].map((entry) => entry.name), ["council-gateway"]);
  }));

Deno.test("install.sh refuses an asset that SHA256SUMS does not list", () =>
  withTempDir(async (dir) => {
    const assets = await makeAssets(dir);
    const sums = await Deno.readTextFile(join(assets, "SHA256SUMS"));
    const withoutLinux = sums.split("\n")
      .filter((line) => !line.endsWith(archiveName("x86_64-unknown-linux-gnu"))).join("\n");
    await Deno.writeTextFile(join(assets, "SHA256SUMS"), withoutLinux);
    const result = await install(dir, {
      COUNCIL_GATEWAY_BASE_URL: assets,
      COUNCIL_GATEWAY_OS: "Linux",
      COUNCIL_GATEWAY_ARCH: "x86_64",
    });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /lists no checksum for council-gateway-x86_64-unknown-linux-gnu/);
    assert.equal(await exists(result.binary), false);
  }));

Deno.test("install.sh refuses unsupported platforms and points Windows users at the zip", () =>
  withTempDir(async (dir) => {
    const assets = await makeAssets(dir);
    const cases: [string, string, RegExp][] = [
      ["FreeBSD", "x86_64", /unsupported operating system: FreeBSD/],
      ["Linux", "riscv64", /unsupported CPU architecture: riscv64/],
      ["MINGW64_NT-10.0", "x86_64", /council-gateway-x86_64-pc-windows-msvc\.zip/],
    ];
    for (const [os, arch, message] of cases) {
      const result = await install(dir, {
        COUNCIL_GATEWAY_BASE_URL: assets,
        COUNCIL_GATEWAY_OS: os,
        COUNCIL_GATEWAY_ARCH: arch,
      });
      assert.notEqual(result.code, 0, `${os} ${arch}`);
      assert.match(result.stderr, message);
      assert.equal(await exists(result.binary), false);
    }
  }));

/** A PATH holding only the tools install.sh uses, optionally without some of them. */
async function restrictedPath(dir: string, without: string[]): Promise<string> {
  const bin = join(dir, "restricted-bin");
  await Deno.mkdir(bin);
  const tools = ["mktemp", "cp", "awk", "cut", "tar", "gzip", "mkdir", "chmod", "mv", "rm"];
  for (const tool of [...tools, "sha256sum", "shasum"].filter((t) => !without.includes(t))) {
    const path = await which(tool);
    if (path) await Deno.symlink(path, join(bin, tool));
  }
  return bin;
}

const shasum = await which("shasum");
if (!shasum) skipNotice("install.sh shasum fallback", "`shasum` (Debian: perl) is not installed");

Deno.test({
  name: "install.sh falls back to `shasum -a 256` when sha256sum is missing",
  ignore: !shasum,
  fn: () =>
    withTempDir(async (dir) => {
      const assets = await makeAssets(dir);
      const path = await restrictedPath(dir, ["sha256sum"]);
      const result = await install(dir, {
        PATH: path,
        COUNCIL_GATEWAY_BASE_URL: assets,
        COUNCIL_GATEWAY_OS: "Linux",
        COUNCIL_GATEWAY_ARCH: "aarch64",
      });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Checksum OK/);
    }),
});

Deno.test("install.sh refuses to install when it has no checksum tool", () =>
  withTempDir(async (dir) => {
    const assets = await makeAssets(dir);
    const path = await restrictedPath(dir, ["sha256sum", "shasum"]);
    const result = await install(dir, {
      PATH: path,
      COUNCIL_GATEWAY_BASE_URL: assets,
      COUNCIL_GATEWAY_OS: "Linux",
      COUNCIL_GATEWAY_ARCH: "x86_64",
    });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /neither sha256sum nor shasum found/);
    assert.equal(await exists(result.binary), false);
  }));

Deno.test("install.sh parses as POSIX sh and downloads from the release repo by default", async () => {
  const syntax = await run("/bin/sh", ["-n", INSTALL_SH]);
  assert.equal(syntax.code, 0, syntax.stderr);
  const text = await Deno.readTextFile(INSTALL_SH);
  assert.ok(text.startsWith("#!/bin/sh\n"));
  assert.ok(text.includes(`DEFAULT_REPO=${DEFAULT_REPO}\n`), "install.sh default repo drifted");
});

const shellcheck = await which("shellcheck");
if (!shellcheck) skipNotice("shellcheck of install.sh", "`shellcheck` is not installed");

Deno.test({
  name: "install.sh passes shellcheck as POSIX sh",
  ignore: !shellcheck,
  async fn() {
    const { code, stdout } = await run("shellcheck", ["-s", "sh", INSTALL_SH]);
    assert.equal(code, 0, stdout);
  },
});
