import assert from "node:assert/strict";
import { join } from "node:path";
import { Isolator } from "../../src/workspace/isolation.ts";
import { defaultWorkspaceRoot, WorkspaceRegistry } from "../../src/workspace/registry.ts";
import {
  ownerAlive,
  parsePsLine,
  probeProcess,
  processIdentity,
} from "../../src/workspace/process_identity.ts";
import { gitRepo, linkedWorktrees, listDir, sh, tempDir } from "../support/git_repos.ts";

Deno.test("registry: the default root is the user's state directory", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(
    defaultWorkspaceRoot(env({ XDG_STATE_HOME: "/s", HOME: "/h" })),
    "/s/council-gateway/workspaces",
  );
  assert.equal(
    defaultWorkspaceRoot(env({ HOME: "/h" })),
    "/h/.local/state/council-gateway/workspaces",
  );
  assert.equal(defaultWorkspaceRoot(env({ XDG_STATE_HOME: "relative" })), undefined);
});

Deno.test("registry: an owner is alive while that very process runs", async () => {
  const self = processIdentity(Deno.pid);
  assert.ok(self);
  assert.equal(ownerAlive(Deno.pid, self), true);
  assert.equal(ownerAlive(Deno.pid, `${self}0`), false, "a reused pid is another process");
  const child = new Deno.Command("true").spawn();
  await child.status;
  assert.equal(ownerAlive(child.pid), false);
});

Deno.test(
  "registry: a gateway that is now a zombie owns nothing: the next start sweeps its workspace",
  {
    ignore: Deno.build.os === "windows",
  },
  async () => {
    await using state = await tempDir();
    // `sh` starts a short `sleep` and becomes a long one, which never reaps it: a zombie.
    const parent = new Deno.Command("sh", {
      args: ["-c", "sleep 0.3 & echo $!; exec sleep 5"],
      stdout: "piped",
    }).spawn();
    const reader = parent.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const pid = Number((await reader.read()).value);
    try {
      const identity = processIdentity(pid);
      assert.ok(identity, "running, it has an identity");
      const dir = join(state.path, `${pid}-t-0000`);
      await Deno.mkdir(dir);
      const record = { version: 1, pid, identity, turnId: "t", createdAt: "" };
      await Deno.writeTextFile(join(dir, "record.json"), JSON.stringify(record));
      assert.deepEqual(await new WorkspaceRegistry(state.path, { pid: 1 }).sweep(), [], "alive");
      let now: string | undefined = identity;
      for (let i = 0; i < 200 && now !== undefined; i++) {
        await new Promise((r) => setTimeout(r, 20));
        now = processIdentity(pid);
      }
      assert.equal(now, undefined, "the exited, unreaped process has no identity");
      assert.equal(probeProcess(pid).state, "zombie", "it still exists, unreaped");
      assert.equal(ownerAlive(pid, identity), false);
      const removed = await new WorkspaceRegistry(state.path, { pid: 1 }).sweep();
      assert.deepEqual(removed, [dir]);
    } finally {
      parent.kill("SIGKILL");
      await parent.status;
      await reader.cancel();
    }
  },
);

Deno.test("registry: identity from ps, zombies, and a ps that cannot tell", () => {
  assert.deepEqual(parsePsLine("Ss   Sat Nov 28 04:08:10 2026"), {
    state: "running",
    started: "Sat Nov 28 04:08:10 2026",
  });
  assert.deepEqual(parsePsLine("Z+   Sat Nov 28 04:08:10 2026"), { state: "zombie" });
  assert.deepEqual(parsePsLine("?"), { state: "unknown" });
  // Without ps, a pid that exists is alive (kept), one that does not is dead.
  const unknown = () => ({ state: "unknown" as const });
  assert.equal(ownerAlive(Deno.pid, "any", unknown), true);
  assert.equal(ownerAlive(2 ** 22 + 1, "any", unknown), false);
  assert.equal(ownerAlive(Deno.pid, "then", () => ({ state: "running", started: "now" })), false);
});

Deno.test("registry: a crashed gateway's worktrees go at the next start while its pid is a zombie or reused", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const live = await new Isolator({ root: state.path }).isolate(repo.path, 1, { turnId: "t" });
  assert.ok(live.ok);
  const dir = join(live.workspace.copies[0].root, "..");
  const record = JSON.parse(await Deno.readTextFile(join(dir, "record.json")));
  assert.equal(record.pid, Deno.pid);
  assert.ok(record.identity, "the owner's start is recorded");
  // Another gateway sees this one running: the workspace is kept.
  assert.deepEqual(await new WorkspaceRegistry(state.path, { pid: 1 }).sweep(), []);
  // The same pid now names another process (a reboot, or a pid reused): it is not the owner.
  await Deno.writeTextFile(
    join(dir, "record.json"),
    JSON.stringify({ ...record, identity: `${record.identity}-before` }),
  );
  const removed = await new WorkspaceRegistry(state.path, { pid: 1 }).sweep();
  assert.equal(removed.length, 1);
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("registry: after a crash the next start removes the dead gateway's worktrees and copies", async () => {
  await using repo = await tempDir();
  await using plain = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  await Deno.writeTextFile(join(plain.path, "n.txt"), "n\n");
  const alive = new Set([111, 222]);
  const isAlive = (pid: number) => alive.has(pid);
  // Gateway 111 crashes mid-turn (nothing disposed); gateway 222 still runs a turn.
  const crashed = new Isolator({ root: state.path, pid: 111, isAlive });
  assert.ok((await crashed.isolate(repo.path, 2, { turnId: "lost" })).ok);
  assert.ok((await crashed.isolate(plain.path, 2, { turnId: "lost-copy" })).ok);
  // A turn that died between writing its record and making its first worktree.
  await crashed.registry.open("half", repo.path);
  const running = new Isolator({ root: state.path, pid: 222, isAlive });
  const live = await running.isolate(repo.path, 1, { turnId: "live" });
  assert.ok(live.ok);
  assert.equal(linkedWorktrees(repo.path).length, 3);
  alive.delete(111);

  // The next start: a new gateway whose pid happens to equal the crashed one's.
  const next = new Isolator({ root: state.path, pid: 111, isAlive });
  const removed = await next.sweep();
  assert.equal(removed.length, 3);
  assert.deepEqual(linkedWorktrees(repo.path), [live.workspace.copies[0].root], "222's is kept");
  assert.deepEqual((await listDir(state.path)).map((name) => name.split("-")[0]), ["222"]);
  await live.workspace.dispose();
  assert.deepEqual(await listDir(state.path), []);
  assert.deepEqual(sh(repo.path, "worktree", "list", "--porcelain").match(/^worktree /gm), [
    "worktree ",
  ]);
});

Deno.test("registry: a sweep with no root yet finds nothing; a repository gone meanwhile is fine", async () => {
  await using state = await tempDir();
  assert.deepEqual(await new WorkspaceRegistry(join(state.path, "absent")).sweep(), []);
  await using repo = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const isolator = new Isolator({ root: state.path, pid: 7, isAlive: () => false });
  assert.ok((await isolator.isolate(repo.path, 1, { turnId: "t" })).ok);
  await Deno.remove(repo.path, { recursive: true });
  await Deno.mkdir(repo.path);
  assert.equal(
    (await new WorkspaceRegistry(state.path, { pid: 8, isAlive: () => false }).sweep()).length,
    1,
  );
  assert.deepEqual(await listDir(state.path), []);
});

Deno.test("registry: a root reached through a symbolic link is swept as git recorded it", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const link = join(state.path, "link");
  await Deno.mkdir(join(state.path, "real"));
  await Deno.symlink(join(state.path, "real"), link);
  const crashed = new Isolator({ root: link, pid: 5, isAlive: () => false });
  assert.ok((await crashed.isolate(repo.path, 2, { turnId: "t" })).ok);
  assert.equal(linkedWorktrees(repo.path).length, 2);
  const removed = await new WorkspaceRegistry(link, { pid: 6, isAlive: () => false }).sweep();
  assert.equal(removed.length, 1);
  assert.deepEqual(linkedWorktrees(repo.path), [], "unregistered, not only deleted");
});

Deno.test("registry: a session's slot is one path on every turn, and taken over from a dead gateway", async () => {
  await using state = await tempDir();
  const alive = new Set([1]);
  const first = new WorkspaceRegistry(state.path, { pid: 1, isAlive: (pid) => alive.has(pid) });
  const dir = await first.open("t1", undefined, "abc");
  assert.ok(dir.endsWith("/s-abc"));
  assert.notEqual(await first.open("t2", undefined, "abc"), dir, "held: a path of its own");
  await first.remove(dir);
  assert.equal(await first.open("t3", undefined, "abc"), dir, "free again: the same path");
  // The gateway dies with the slot open; the next one takes it over on its next turn.
  alive.delete(1);
  const next = new WorkspaceRegistry(state.path, { pid: 2, isAlive: (pid) => alive.has(pid) });
  assert.equal(await next.open("t4", undefined, "abc"), dir);
  const record = JSON.parse(await Deno.readTextFile(join(dir, "record.json")));
  assert.equal(record.pid, 2);
});

Deno.test("registry: the next start sweeps a dead gateway's session slots", async () => {
  await using state = await tempDir();
  await using repo = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const alive = new Set([1, 3]);
  const isAlive = (pid: number) => alive.has(pid);
  const crashed = new Isolator({ root: state.path, pid: 1, isAlive });
  assert.ok((await crashed.isolate(repo.path, 2, { turnId: "t", slot: "dead" })).ok);
  const running = new Isolator({ root: state.path, pid: 3, isAlive });
  assert.ok((await running.isolate(repo.path, 1, { turnId: "u", slot: "live" })).ok);
  alive.delete(1);
  const removed = await new WorkspaceRegistry(state.path, { pid: 2, isAlive }).sweep();
  assert.deepEqual(removed.map((dir) => dir.split("/").pop()), ["s-dead"]);
  assert.equal(linkedWorktrees(repo.path).length, 1, "the live gateway's worktree is kept");
});

Deno.test("registry: a slot this process holds is known without asking ps; one it left behind is taken back", async () => {
  await using state = await tempDir();
  let asked = 0;
  const registry = new WorkspaceRegistry(state.path, {
    pid: 1,
    isAlive: () => {
      asked++;
      return true;
    },
  });
  const dir = await registry.open("t1", undefined, "own");
  assert.notEqual(await registry.open("t2", undefined, "own"), dir);
  assert.equal(asked, 0, "its own running turn holds it");
  // A turn of this process whose clean-up failed left the slot behind: the next turn takes it.
  const other = new WorkspaceRegistry(state.path, { pid: 1, isAlive: () => true });
  const left = await other.open("t3", undefined, "left");
  const fresh = new WorkspaceRegistry(state.path, {
    pid: 1,
    isAlive: () => {
      asked++;
      return true;
    },
  });
  assert.equal(await fresh.open("t4", undefined, "left"), left);
  assert.equal(asked, 0);
});

Deno.test("registry: a process's identity does not depend on the time zone it is asked in", () => {
  const previous = Deno.env.get("TZ");
  try {
    Deno.env.set("TZ", "Asia/Tokyo");
    const tokyo = processIdentity(Deno.pid);
    Deno.env.set("TZ", "America/Los_Angeles");
    assert.ok(tokyo);
    assert.equal(processIdentity(Deno.pid), tokyo);
  } finally {
    if (previous === undefined) Deno.env.delete("TZ");
    else Deno.env.set("TZ", previous);
  }
});
