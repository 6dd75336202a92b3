/**
 * The spawn helper: installed once into a private directory (checked, rewritten when it is not
 * exactly ours), and, run for real, a transparent setsid-then-exec: same argv, env, stdio and
 * exit code, in a new session, with a parseable line when it cannot exec.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  helperDirectory,
  helperExecErrno,
  installSpawnHelper,
  spawnHelperImage,
} from "../../src/agents/spawn_helper.ts";
import { tempDir } from "./support.ts";

const helperHere = Deno.build.os === "linux" && Deno.build.arch === "x86_64";

async function install(directory: string): Promise<string> {
  const result = await installSpawnHelper({ directory });
  assert.ok("path" in result, JSON.stringify(result));
  return result.path;
}

async function runHelper(
  helper: string,
  args: string[],
  { env = {}, stdin = "" }: { env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(helper, {
    args,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const output = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("spawnHelperImage: a 64-bit little-endian x86_64 executable whose entry is in the file", () => {
  const image = spawnHelperImage();
  const view = new DataView(image.buffer);
  assert.deepEqual([...image.slice(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
  assert.equal(image[4], 2, "ELFCLASS64");
  assert.equal(image[5], 1, "little-endian");
  assert.equal(view.getUint16(16, true), 2, "ET_EXEC");
  assert.equal(view.getUint16(18, true), 0x3e, "EM_X86_64");
  const entry = Number(view.getBigUint64(24, true));
  const loadAddress = Number(view.getBigUint64(64 + 16, true));
  assert.ok(entry > loadAddress && entry < loadAddress + image.length);
  assert.equal(Number(view.getBigUint64(64 + 32, true)), image.length, "the whole file is loaded");
  assert.ok(image.length < 512);
});

Deno.test("helperDirectory: XDG_CACHE_HOME, else ~/.cache; never a relative path", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(
    helperDirectory(env({ XDG_CACHE_HOME: "/x/cache", HOME: "/home/u" })),
    "/x/cache/council-gateway",
  );
  assert.equal(helperDirectory(env({ HOME: "/home/u" })), "/home/u/.cache/council-gateway");
  assert.equal(helperDirectory(env({ XDG_CACHE_HOME: "cache" })), undefined);
  assert.equal(helperDirectory(env({})), undefined);
});

Deno.test("helperExecErrno: only the helper's own line for that executable", () => {
  const line = "council-gateway spawn helper: cannot execute /bin/x: errno 13";
  assert.equal(helperExecErrno(line, "/bin/x"), 13);
  assert.equal(helperExecErrno(line, "/bin/y"), undefined);
  assert.equal(helperExecErrno(`${line} and more`, "/bin/x"), undefined);
  assert.equal(helperExecErrno("council-gateway spawn helper: cannot execute : errno 14", ""), 14);
});

Deno.test("installSpawnHelper: not on other systems or architectures", async () => {
  await using dir = await tempDir();
  for (
    const [os, arch] of [["darwin", "aarch64"], ["linux", "aarch64"], [
      "windows",
      "x86_64",
    ]] as const
  ) {
    const result = await installSpawnHelper({ directory: dir.path, os, arch });
    assert.deepEqual(result, { error: `not available on ${os} ${arch}` });
  }
  assert.deepEqual([...Deno.readDirSync(dir.path)], [], "nothing written");
});

Deno.test({
  name: "installSpawnHelper: creates a private directory and an owner-only executable",
  ignore: !helperHere,
  async fn() {
    await using dir = await tempDir();
    const directory = join(dir.path, "cache", "council-gateway");
    const helper = await install(directory);
    assert.equal(Deno.statSync(directory).mode! & 0o777, 0o700);
    assert.equal(Deno.statSync(helper).mode! & 0o777, 0o700);
    assert.deepEqual(Deno.readFileSync(helper), spawnHelperImage());
    assert.deepEqual([...Deno.readDirSync(directory)].map((e) => e.name), [helper.slice(-25)]);
  },
});

Deno.test({
  name:
    "installSpawnHelper: reuses its file, and replaces one that is altered or writable by others",
  ignore: !helperHere,
  async fn() {
    await using dir = await tempDir();
    const helper = await install(dir.path);
    const inode = Deno.statSync(helper).ino;
    assert.equal(await install(dir.path), helper);
    assert.equal(Deno.statSync(helper).ino, inode, "left as it was");

    const altered = spawnHelperImage();
    altered[altered.length - 1] ^= 1;
    Deno.writeFileSync(helper, altered);
    assert.equal(await install(dir.path), helper);
    assert.deepEqual(Deno.readFileSync(helper), spawnHelperImage());

    Deno.chmodSync(helper, 0o777);
    assert.equal(await install(dir.path), helper);
    assert.equal(Deno.statSync(helper).mode! & 0o777, 0o700);

    // A link is never what runs, even to an exact copy (which another user could later change).
    const copy = join(dir.path, "copy");
    Deno.writeFileSync(copy, spawnHelperImage(), { mode: 0o700 });
    Deno.removeSync(helper);
    Deno.symlinkSync(copy, helper);
    assert.equal(await install(dir.path), helper);
    assert.equal(Deno.lstatSync(helper).isFile, true, "replaced by a file of its own");
  },
});

Deno.test({
  name: "installSpawnHelper: refuses a directory others may write, or whose parent they may",
  ignore: !helperHere,
  async fn() {
    await using dir = await tempDir();
    const open = join(dir.path, "open");
    Deno.mkdirSync(open);
    Deno.chmodSync(open, 0o777);
    assert.deepEqual(await installSpawnHelper({ directory: open }), {
      error: `${open} is writable by others`,
    });
    const inOpen = join(open, "council-gateway");
    assert.deepEqual(await installSpawnHelper({ directory: inOpen }), {
      error: `${open} is writable by others`,
    });
    Deno.chmodSync(open, 0o1777); // sticky, like /tmp: others cannot rename what is ours
    const sticky = await installSpawnHelper({ directory: inOpen });
    assert.ok("path" in sticky, JSON.stringify(sticky));
    assert.equal(Deno.statSync(inOpen).mode! & 0o777, 0o700);
  },
});

Deno.test({
  name: "installSpawnHelper: a directory it cannot make is a reason, not a throw",
  ignore: !helperHere,
  async fn() {
    await using dir = await tempDir();
    const file = join(dir.path, "a-file");
    Deno.writeTextFileSync(file, "");
    const result = await installSpawnHelper({ directory: join(file, "council-gateway") });
    assert.ok("error" in result && result.error.startsWith("cannot write"), JSON.stringify(result));
  },
});

Deno.test({
  name: "spawn helper: execs in place in a new session with argv, env and stdio untouched",
  ignore: !helperHere,
  async fn() {
    await using dir = await tempDir();
    const helper = await install(dir.path);
    const script = 'read -r line; printf "%s|" "$0" "$@" "$line" "$ONLY"; ' +
      "stat=$(cat /proc/$$/stat); echo; echo $$ ${stat#*) }; echo oops >&2; exit 7";
    const result = await runHelper(helper, ["/bin/sh", "-c", script, "zero", "a b", "", "c"], {
      env: { ONLY: "this", PATH: "/usr/bin:/bin" },
      stdin: "from stdin\n",
    });
    assert.equal(result.code, 7);
    assert.equal(result.stderr, "oops\n");
    const [echoed, stat] = result.stdout.split("\n");
    assert.equal(echoed, "zero|a b||c|from stdin|this|");
    const [pid, _state, ppid, pgid, sid] = stat.split(" ");
    assert.equal(Number(ppid), Deno.pid, "the helper became the shell: its parent is us");
    assert.equal(pgid, pid, "group leader");
    assert.equal(sid, pid, "session leader");
  },
});

Deno.test({
  name: "spawn helper: cannot exec → one stderr line naming the executable and errno, exit 127",
  ignore: !helperHere,
  async fn() {
    await using dir = await tempDir();
    const helper = await install(dir.path);
    const missing = join(dir.path, "missing");
    const notExecutable = join(dir.path, "plain");
    Deno.writeTextFileSync(notExecutable, "echo never\n");
    for (const [path, errno] of [[missing, 2], [notExecutable, 13], [dir.path, 13]] as const) {
      const result = await runHelper(helper, [path, "arg"]);
      assert.equal(result.code, 127);
      assert.equal(result.stdout, "");
      assert.equal(
        result.stderr,
        `council-gateway spawn helper: cannot execute ${path}: errno ${errno}\n`,
      );
      assert.equal(helperExecErrno(result.stderr.trimEnd(), path), errno);
    }
  },
});
