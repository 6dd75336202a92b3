/**
 * A session's kept worktrees are reset only while they are still the gateway's own: a child
 * that deleted its `.git` (with the state directory inside the user's repository) never leads
 * the reset to the user's HEAD, branch, index, files or stashes, and a worktree holding git state
 * of its own (a bisect, a rebase, a sparse checkout) is made afresh rather than reset.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Isolator } from "../../src/workspace/isolation.ts";
import { BrokenWorktree, resetWorktrees } from "../../src/workspace/kept_worktree.ts";
import { FakeClock } from "../support/fake_clock.ts";
import {
  gitRepo,
  linkedWorktrees,
  listDir,
  read,
  sh,
  status,
  tempDir,
  writeFiles,
} from "../support/git_repos.ts";
import { isolate as isolateIn, keeping } from "../support/kept_isolator.ts";

/** A turn of the session "s". */
const isolate = (isolator: Isolator, cwd: string, count: number) =>
  isolateIn(isolator, cwd, count, "s");

/** Everything of the user's repository a stray checkout, clean or reset would change. */
async function userState(repo: string) {
  return {
    head: sh(repo, "rev-parse", "HEAD"),
    branch: sh(repo, "symbolic-ref", "--quiet", "HEAD"),
    status: status(repo),
    staged: sh(repo, "diff", "--cached"),
    stashes: sh(repo, "stash", "list"),
    files: {
      "a.txt": await read(join(repo, "a.txt")),
      "staged.txt": await read(join(repo, "staged.txt")),
      "draft.md": await read(join(repo, "draft.md")),
      "notes.log": await read(join(repo, "notes.log")),
    },
  };
}

/** A user's repository with a stash, a staged file, an edit, an untracked and an ignored file. */
async function busyRepo(dir: string): Promise<void> {
  await gitRepo(dir, { "a.txt": "a\n", ".gitignore": "*.log\n.state/\n" });
  await writeFiles(dir, { "a.txt": "stashed edit\n" });
  sh(dir, "stash", "--quiet");
  await writeFiles(dir, { "staged.txt": "staged\n" });
  sh(dir, "add", "staged.txt");
  await writeFiles(dir, {
    "a.txt": "the user's edit\n",
    "draft.md": "untracked\n",
    "notes.log": "ignored\n",
  });
}

Deno.test("kept worktree safety: a child deleting .git never lets the reset reach the user's repository", async () => {
  await using repo = await tempDir();
  await busyRepo(repo.path);
  // The state directory inside the user's repository (a dotfiles repo in ~, HOME in a container).
  const isolator = keeping(join(repo.path, ".state"));
  const before = await userState(repo.path);
  try {
    // At the turn's end: a child of this turn deleted its link to the repository.
    const first = await isolate(isolator, repo.path, 2);
    await Deno.remove(join(first.copies[0].root, ".git"));
    await first.dispose();
    assert.deepEqual(await userState(repo.path), before, "after the turn's clean-up");

    // Between turns: a process waiting in a kept worktree deleted it.
    const second = await isolate(isolator, repo.path, 2);
    await second.dispose();
    assert.equal(isolator.registry.kept, 1, "kept");
    await Deno.remove(join(second.copies[1].root, ".git"));
    const third = await isolate(isolator, repo.path, 2);
    assert.deepEqual(await userState(repo.path), before, "after the next turn's reset");
    assert.equal(third.reset, 0, "the broken slot was made afresh");
    for (const copy of third.copies) {
      assert.equal(await read(join(copy.root, "a.txt")), "the user's edit\n");
      assert.equal(sh(copy.root, "rev-parse", "--show-toplevel").trim(), copy.root);
    }
    await third.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(await userState(repo.path), before, "after shutdown");
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("kept worktree safety: a child's changes are read from its own worktree even without .git", async () => {
  await using repo = await tempDir();
  await busyRepo(repo.path);
  const isolator = keeping(join(repo.path, ".state"));
  try {
    const turn = await isolate(isolator, repo.path, 1);
    const root = turn.copies[0].root;
    await writeFiles(root, { "mine.txt": "the child's\n" });
    await Deno.remove(join(root, ".git"));
    const changes = await turn.changes(0);
    assert.deepEqual(changes.files.map((f) => f.path), ["mine.txt"]);
    await turn.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(await listDir(join(repo.path, ".state")), []);
});

/** Git state a child leaves in its worktree's own git dir: a bisect, a rebase, a sparse checkout. */
function startGitWork(roots: readonly string[]): void {
  const [bisecting, rebasing, sparse] = roots;
  sh(bisecting, "bisect", "start");
  sh(bisecting, "bisect", "bad");
  sh(rebasing, "commit", "--quiet", "--allow-empty", "-m", "the child's");
  // Stops after the first pick (its exec fails), leaving the rebase in progress.
  assert.throws(() => sh(rebasing, "rebase", "--quiet", "--exec", "false", "HEAD~1"));
  sh(sparse, "sparse-checkout", "set", "src");
  sh(sparse, "worktree", "lock", sparse);
}

Deno.test("kept worktree safety: a worktree left bisecting, rebasing or sparse is made afresh, not reset", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n", "src/b.txt": "b\n" });
  sh(repo.path, "commit", "--quiet", "--allow-empty", "-m", "second");
  await writeFiles(repo.path, { "a.txt": "the user's edit\n" });
  const isolator = keeping(state.path);
  try {
    const first = await isolate(isolator, repo.path, 3);
    const fresh = await Promise.all(first.copies.map((c) => gitDirEntries(c.root)));
    startGitWork(first.copies.map((c) => c.root));
    await first.dispose();
    const second = await isolate(isolator, repo.path, 3);
    assert.deepEqual(second.copies, first.copies, "the same paths");
    for (const [i, copy] of second.copies.entries()) {
      assert.deepEqual(await gitDirEntries(copy.root), fresh[i], `child ${i + 1}'s git dir`);
      assert.deepEqual(status(copy.root), [" M a.txt"], `child ${i + 1}'s status`);
      assert.equal(await read(join(copy.root, "a.txt")), "the user's edit\n");
      assert.equal(await read(join(copy.root, "src/b.txt")), "b\n");
    }
    await second.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

/** The names in the worktree's own git dir. */
function gitDirEntries(root: string): Promise<string[]> {
  return listDir(sh(root, "rev-parse", "--path-format=absolute", "--git-dir").trim());
}

/** An isolator whose directory removals fail `failures` times first (say, ENOTEMPTY). */
function failingRemovals(root: string, failures: number) {
  const removeDir = async (dir: string) => {
    if (failures-- > 0) throw new Error(`cannot remove ${dir}: Directory not empty`);
    await Deno.remove(dir, { recursive: true });
  };
  const keep = { idleMs: 60_000, clock: new FakeClock() };
  return new Isolator({ root, pid: 4242, isAlive: () => false, keep, removeDir });
}

Deno.test("kept worktree safety: a failed removal is retried once", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const isolator = failingRemovals(state.path, 1);
  try {
    const turn = await isolate(isolator, repo.path, 2);
    await Deno.remove(join(turn.copies[0].root, ".git"));
    await turn.dispose();
    assert.deepEqual(await listDir(state.path), [], "the broken slot is gone");
  } finally {
    await isolator.shutdown();
  }
});

Deno.test("kept worktree safety: a slot that could not be removed is the session's again next turn", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const isolator = failingRemovals(state.path, 2);
  try {
    const first = await isolate(isolator, repo.path, 2);
    await Deno.remove(join(first.copies[0].root, ".git"));
    await assert.rejects(first.dispose(), /Directory not empty/);
    const second = await isolate(isolator, repo.path, 2);
    assert.deepEqual(second.copies, first.copies, "the slot's own, cache-stable paths");
    await second.dispose();
  } finally {
    await isolator.shutdown();
  }
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("kept worktree safety: resetting kept worktrees fails only once every reset has ended", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f/${i}.txt`, `${i}\n`]));
  await gitRepo(repo.path, { "a.txt": "a\n", ...many });
  const isolator = keeping(state.path);
  try {
    const first = await isolate(isolator, repo.path, 2);
    await first.dispose();
    const [broken, healthy] = first.copies.map((c) => c.root);
    await Deno.remove(join(broken, ".git"));
    await Deno.remove(join(healthy, "f"), { recursive: true });
    await writeFiles(healthy, { "added.txt": "a child's\n" });
    const slot = await isolator.registry.reopen("t-2", repo.path, "s");
    const common = sh(repo.path, "rev-parse", "--path-format=absolute", "--git-common-dir").trim();
    const head = sh(repo.path, "rev-parse", "HEAD").trim();
    const target = { common, snapshot: head, head };
    await assert.rejects(resetWorktrees(slot!.roots, target), BrokenWorktree);
    assert.equal(await read(join(healthy, "f/299.txt")), "299\n", "its sibling's reset ended");
    assert.equal(await read(join(healthy, "added.txt")), undefined);
    await isolator.registry.remove(slot!.dir);
  } finally {
    await isolator.shutdown();
  }
});
