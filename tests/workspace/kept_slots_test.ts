/**
 * A session's worktrees kept between its turns: reset in place to exactly what a fresh worktree
 * holds, released (not removed) at a turn's end, removed when idle, on shutdown, and by the next
 * start after a crash; a concurrent turn of the session still gets (and loses) its own.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { WorkspaceRegistry } from "../../src/workspace/registry.ts";
import { FakeClock } from "../support/fake_clock.ts";
import { eventually } from "../support/wait.ts";
import {
  exists,
  gitRepo,
  linkedWorktrees,
  listDir,
  read,
  sh,
  status,
  tempDir,
  writeFiles,
} from "../support/git_repos.ts";
import { IDLE_MS, isolate, keeping } from "../support/kept_isolator.ts";

/** Every file under `root` but git's own, with its content (symlinks by target). */
async function files(root: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.name === ".git") continue;
      if (entry.isDirectory) await walk(path);
      else if (entry.isSymlink) found[relative(root, path)] = `-> ${await Deno.readLink(path)}`;
      else {
        const mode = (await Deno.stat(path)).mode! & 0o111 ? "x " : "";
        found[relative(root, path)] = mode + await Deno.readTextFile(path);
      }
    }
  };
  await walk(root);
  return found;
}

/** What a child leaves behind: changes, additions, deletions, ignored files, a commit, a repo. */
async function messUp(root: string): Promise<void> {
  await writeFiles(root, {
    "a.txt": "changed by the child\n",
    "new/deep/file.txt": "added\n",
    "build/out.log": "ignored output\n",
    "cache.log": "ignored too\n",
  });
  await Deno.remove(join(root, "src/b.txt"));
  await Deno.chmod(join(root, "run.sh"), 0o755);
  sh(root, "add", "a.txt");
  sh(root, "commit", "--quiet", "-m", "the child's own commit");
  await Deno.mkdir(join(root, "nested"));
  sh(join(root, "nested"), "init", "--quiet");
}

Deno.test("kept slots: a kept worktree reset for the next turn equals a freshly made one", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await using other = await tempDir();
  await gitRepo(repo.path, {
    "a.txt": "a\n",
    "src/b.txt": "b\n",
    "run.sh": "echo\n",
    ".gitignore": "*.log\nbuild/\n",
  });
  await writeFiles(repo.path, { "a.txt": "the user's edit\n", "draft.md": "untracked\n" });
  const isolator = keeping(state.path);
  const first = await isolate(isolator, join(repo.path, "src"), 2, "s1");
  const inodes = await Promise.all(first.copies.map(async (c) => (await Deno.stat(c.root)).ino));
  for (const copy of first.copies) await messUp(copy.root);
  await first.dispose();
  assert.equal(first.kept, true);
  assert.equal(linkedWorktrees(repo.path).length, 2, "released, not removed");

  // The user works on between the turns: the next turn starts from the new state.
  await writeFiles(repo.path, { "src/b.txt": "b, edited later\n", "later.txt": "new\n" });
  sh(repo.path, "add", "later.txt");
  const second = await isolate(isolator, join(repo.path, "src"), 2, "s1");
  assert.equal(second.reset, 2, "both kept worktrees were reset, none made");
  assert.deepEqual(second.copies, first.copies, "the same paths");
  const fresh = await isolate(keeping(other.path), join(repo.path, "src"), 2);
  assert.equal(fresh.reset, 0);
  try {
    for (const [i, copy] of second.copies.entries()) {
      const made = fresh.copies[i];
      assert.equal((await Deno.stat(copy.root)).ino, inodes[i], "the directory itself is kept");
      assert.deepEqual(await files(copy.root), await files(made.root), `child ${i + 1}'s files`);
      assert.deepEqual(status(copy.root), status(made.root), "git status");
      assert.deepEqual(status(copy.root), [
        " M a.txt",
        " M src/b.txt",
        "?? draft.md",
        "?? later.txt",
      ]);
      assert.equal(sh(copy.root, "rev-parse", "HEAD"), sh(made.root, "rev-parse", "HEAD"), "HEAD");
      assert.equal(await exists(join(copy.root, "cache.log")), false, "ignored files gone");
      assert.deepEqual((await second.changes(i)).files, [], "no change carried over");
    }
  } finally {
    await fresh.dispose();
    await second.dispose();
    await isolator.shutdown();
  }
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.deepEqual(await listDir(state.path), []);
});

Deno.test("kept slots: more children get new worktrees, fewer remove the rest; another repository starts afresh", async () => {
  await using repo = await tempDir();
  await using otherRepo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  await gitRepo(otherRepo.path, { "o.txt": "o\n" });
  const isolator = keeping(state.path);
  try {
    const two = await isolate(isolator, repo.path, 2, "s");
    await two.dispose();
    const three = await isolate(isolator, repo.path, 3, "s");
    assert.equal(three.reset, 2);
    assert.equal(linkedWorktrees(repo.path).length, 3);
    await three.dispose();
    const one = await isolate(isolator, repo.path, 1, "s");
    assert.equal(one.reset, 1);
    assert.deepEqual(linkedWorktrees(repo.path), [one.copies[0].root], "the extra two removed");
    await one.dispose();

    const elsewhere = await isolate(isolator, otherRepo.path, 2, "s");
    assert.equal(elsewhere.reset, 0, "made afresh for the other repository");
    assert.deepEqual(linkedWorktrees(repo.path), [], "the first repository's are removed");
    assert.equal(await read(join(elsewhere.copies[0].root, "o.txt")), "o\n");
    await elsewhere.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(linkedWorktrees(otherRepo.path), []);
});

Deno.test("kept slots: a kept worktree a child broke is made afresh", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const isolator = keeping(state.path);
  try {
    const first = await isolate(isolator, repo.path, 2, "s");
    await first.dispose();
    // Between the turns (say, a waiting process) the worktree's link to its repository goes.
    await Deno.remove(join(first.copies[1].root, ".git"));
    const second = await isolate(isolator, repo.path, 2, "s");
    assert.equal(second.reset, 0);
    assert.deepEqual(second.copies, first.copies);
    for (const copy of second.copies) assert.equal(await read(join(copy.root, "a.txt")), "a\n");
    assert.equal(linkedWorktrees(repo.path).length, 2);
    await second.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("kept slots: released at the turn's end; a concurrent turn's own directory and plain copies are removed", async () => {
  await using repo = await tempDir();
  await using plain = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  await writeFiles(plain.path, { "n.txt": "n\n" });
  const isolator = keeping(state.path);
  try {
    const slot = await isolate(isolator, repo.path, 2, "s");
    const concurrent = await isolate(isolator, repo.path, 2, "s");
    assert.notDeepEqual(concurrent.copies, slot.copies, "a directory of its own");
    assert.equal(slot.kept, true);
    assert.equal(concurrent.kept, false, "its copies are the turn's alone");
    await concurrent.dispose();
    await slot.dispose();
    const [kept] = await listDir(state.path);
    assert.equal(kept, "s-s", "only the slot is left");
    assert.deepEqual(linkedWorktrees(repo.path), slot.copies.map((c) => c.root));
    assert.equal(isolator.registry.kept, 1);

    const copied = await isolate(isolator, plain.path, 2, "p");
    assert.equal(copied.kind, "copy");
    assert.equal(copied.kept, false, "plain copies are not kept");
    await copied.dispose();
    assert.deepEqual(await listDir(state.path), ["s-s"]);
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(await listDir(state.path), [], "shutdown removes the kept slot");
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("kept slots: a slot idle for idleMs is removed; a turn in between restarts the wait", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const clock = new FakeClock();
  const isolator = keeping(state.path, clock);
  try {
    await (await isolate(isolator, repo.path, 1, "s")).dispose();
    clock.advance(IDLE_MS - 1);
    const again = await isolate(isolator, repo.path, 1, "s");
    assert.equal(again.reset, 1, "still kept just before idleMs");
    clock.advance(IDLE_MS);
    assert.equal(clock.pending, 0, "no reaping while a turn holds it");
    await again.dispose();
    clock.advance(IDLE_MS - 1);
    assert.deepEqual(await listDir(state.path), ["s-s"]);
    clock.advance(1);
    await eventually(async () => (await listDir(state.path)).length === 0, "the slot reaped");
    assert.deepEqual(linkedWorktrees(repo.path), [], "its worktrees unregistered");
    assert.equal(isolator.registry.kept, 0);
    const next = await isolate(isolator, repo.path, 1, "s");
    assert.equal(next.reset, 0, "the next turn makes it afresh");
    await next.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.equal(clock.pending, 0, "shutdown leaves no timer");
});

Deno.test("kept slots: after shutdown a turn's slot is removed at its end, not kept", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const clock = new FakeClock();
  const isolator = keeping(state.path, clock);
  const running = await isolate(isolator, repo.path, 1, "s");
  await isolator.shutdown();
  await running.dispose();
  assert.deepEqual(await listDir(state.path), []);
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.equal(clock.pending, 0);
});

Deno.test("kept slots: the next start sweeps a crashed gateway's kept slots, not a live one's", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const alive = new Set([1, 3]);
  const isAlive = (pid: number) => alive.has(pid);
  const crashed = keeping(state.path, new FakeClock(), 1, isAlive);
  const live = keeping(state.path, new FakeClock(), 3, isAlive);
  try {
    await (await isolate(crashed, repo.path, 2, "dead")).dispose();
    await (await isolate(live, repo.path, 1, "live")).dispose();
    assert.equal(linkedWorktrees(repo.path).length, 3, "both kept");
    assert.deepEqual(await new WorkspaceRegistry(state.path, { pid: 2, isAlive }).sweep(), []);
    alive.delete(1);
    const removed = await new WorkspaceRegistry(state.path, { pid: 2, isAlive }).sweep();
    assert.deepEqual(removed.map((dir) => dir.split("/").pop()), ["s-dead"]);
    assert.equal(linkedWorktrees(repo.path).length, 1, "the live gateway's kept slot stays");
  } finally {
    await crashed.shutdown();
    await live.shutdown();
  }
});
