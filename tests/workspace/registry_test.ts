import assert from "node:assert/strict";
import { join } from "node:path";
import { Isolator } from "../../src/workspace/isolation.ts";
import {
  defaultWorkspaceRoot,
  processAlive,
  WorkspaceRegistry,
} from "../../src/workspace/registry.ts";
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

Deno.test("registry: a process is alive while it runs", async () => {
  assert.equal(processAlive(Deno.pid), true);
  const child = new Deno.Command("true").spawn();
  await child.status;
  assert.equal(processAlive(child.pid), false);
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
