import assert from "node:assert/strict";
import { join } from "node:path";
import { gitVersionProblem, Isolator } from "../../src/workspace/isolation.ts";
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

/** An isolator keeping its workspaces under `root`, as process `pid`. */
function isolator(root: string, pid = 4242) {
  return new Isolator({ root, pid, isAlive: () => false });
}

Deno.test("isolation: each child gets a worktree at HEAD with the user's uncommitted and untracked files", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n", "src/b.txt": "b\n", ".gitignore": "*.log\n" });
  await writeFiles(repo.path, {
    "a.txt": "a edited\n",
    "todo.md": "untracked\n",
    "x.log": "ign\n",
  });
  sh(repo.path, "add", "a.txt");
  const userStatus = status(repo.path);

  const isolation = await isolator(state.path).isolate(join(repo.path, "src"), 3, { turnId: "t1" });
  assert.ok(isolation.ok, isolation.ok ? "" : isolation.reason);
  const { workspace } = isolation;
  assert.equal(workspace.kind, "worktree");
  assert.equal(workspace.realRoot, repo.path);
  assert.equal(workspace.copies.length, 3);
  for (const copy of workspace.copies) {
    assert.ok(copy.root.startsWith(`${state.path}/`), "under the known directory");
    assert.equal(copy.cwd, join(copy.root, "src"), "the child starts where the user works");
    assert.equal(await read(join(copy.root, "a.txt")), "a edited\n");
    assert.equal(await read(join(copy.root, "todo.md")), "untracked\n");
    assert.equal(await exists(join(copy.root, "x.log")), false, "ignored files stay out");
    assert.deepEqual(status(copy.root), [" M a.txt", "?? todo.md"], "git shows the changes");
    assert.equal(sh(copy.root, "rev-parse", "HEAD"), sh(repo.path, "rev-parse", "HEAD"));
  }
  assert.equal(linkedWorktrees(repo.path).length, 3);
  assert.deepEqual(status(repo.path), userStatus, "the user's repository is untouched");

  await workspace.dispose();
  await workspace.dispose();
  assert.deepEqual(linkedWorktrees(repo.path), [], "worktrees unregistered");
  assert.deepEqual(await listDir(state.path), [], "and deleted");
  assert.deepEqual(status(repo.path), userStatus);
});

Deno.test("isolation: concurrent conflicting edits stay apart; only the chosen diff reaches the workspace", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": "line 1\nline 2\nline 3\n", "keep.txt": "k\n" });
  const isolation = await isolator(state.path).isolate(repo.path, 3, { turnId: "t2" });
  assert.ok(isolation.ok);
  const { workspace } = isolation;
  try {
    // Three "children" write the same file at the same time, each its own way.
    await Promise.all(workspace.copies.map(async (copy, i) => {
      for (let line = 0; line < 20; line++) {
        await Deno.writeTextFile(join(copy.cwd, "shared.txt"), `child ${i} line ${line}\n`, {
          append: line > 0,
        });
      }
      await writeFiles(copy.cwd, { [`only-${i}.txt`]: `${i}\n` });
      if (i === 2) await Deno.remove(join(copy.cwd, "keep.txt"));
    }));
    const changes = await Promise.all(workspace.copies.map((_, i) => workspace.changes(i)));
    for (const [i, change] of changes.entries()) {
      const text = await read(join(workspace.copies[i].cwd, "shared.txt"));
      assert.equal(text?.split("\n").filter((l) => !l.startsWith(`child ${i} `)).join(""), "");
      assert.deepEqual(
        change.files.map((f) => `${f.path} +${f.added} -${f.removed}`),
        [
          ...(i === 2 ? ["keep.txt +0 -1"] : []),
          `only-${i}.txt +1 -0`,
          "shared.txt +20 -3",
        ],
      );
    }
    assert.equal(await read(join(repo.path, "shared.txt")), "line 1\nline 2\nline 3\n");
    assert.deepEqual(status(repo.path), [], "no write reached the workspace yet");

    const result = await workspace.apply(changes[1]);
    assert.deepEqual(result, { applied: true, files: changes[1].files });
    const expected = Array.from({ length: 20 }, (_, l) => `child 1 line ${l}\n`).join("");
    assert.equal(await read(join(repo.path, "shared.txt")), expected);
    assert.equal(await read(join(repo.path, "only-1.txt")), "1\n");
    assert.equal(await exists(join(repo.path, "only-0.txt")), false);
    assert.equal(await exists(join(repo.path, "only-2.txt")), false);
    assert.equal(await read(join(repo.path, "keep.txt")), "k\n");
    assert.deepEqual(status(repo.path), [" M shared.txt", "?? only-1.txt"], "nothing staged");
  } finally {
    await workspace.dispose();
  }
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("isolation: a small directory outside git is copied, diffed and applied", async () => {
  await using dir = await tempDir();
  await using state = await tempDir();
  await writeFiles(dir.path, { "notes.md": "one\ntwo\n", "sub/data.txt": "d\n" });
  const isolation = await isolator(state.path).isolate(dir.path, 2, { turnId: "t3" });
  assert.ok(isolation.ok, isolation.ok ? "" : isolation.reason);
  const { workspace } = isolation;
  try {
    assert.equal(workspace.kind, "copy");
    for (const copy of workspace.copies) {
      assert.equal(copy.cwd, copy.root);
      assert.deepEqual(await listDir(copy.root), ["notes.md", "sub"], "a plain copy, no .git");
    }
    await writeFiles(workspace.copies[0].cwd, { "notes.md": "one\ntwo\nthree\n" });
    await writeFiles(workspace.copies[1].cwd, { "notes.md": "uno\n", "new.txt": "n\n" });
    const first = await workspace.changes(0);
    assert.deepEqual(first.files, [{ path: "notes.md", added: 1, removed: 0, binary: false }]);
    const second = await workspace.changes(1);
    assert.deepEqual(second.files.map((f) => f.path), ["new.txt", "notes.md"]);
    assert.equal(await read(join(dir.path, "notes.md")), "one\ntwo\n", "untouched so far");
    assert.deepEqual((await workspace.apply(first)).applied, true);
    assert.equal(await read(join(dir.path, "notes.md")), "one\ntwo\nthree\n");
    assert.deepEqual(await listDir(dir.path), ["notes.md", "sub"], "no git dir left in it");
  } finally {
    await workspace.dispose();
  }
  assert.deepEqual(await listDir(state.path), []);
});

Deno.test("isolation: a directory outside git that is too large, or holds a repository, is not copied", async () => {
  await using dir = await tempDir();
  await using state = await tempDir();
  await writeFiles(dir.path, { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
  const small = new Isolator({ root: state.path, copyLimits: { maxFiles: 2, maxBytes: 2 ** 20 } });
  const tooMany = await small.isolate(dir.path, 2, { turnId: "t4" });
  assert.deepEqual(tooMany, {
    ok: false,
    reason:
      "the directory is not in git and it is larger than a copy is made for (2 files or 1 MiB)",
  });
  const tiny = new Isolator({ root: state.path, copyLimits: { maxFiles: 100, maxBytes: 4 } });
  assert.equal((await tiny.isolate(dir.path, 2, { turnId: "t5" })).ok, false);

  await using parent = await tempDir();
  await Deno.mkdir(join(parent.path, "project"));
  await gitRepo(join(parent.path, "project"), { "x.txt": "x\n" });
  const nested = await isolator(state.path).isolate(parent.path, 2, { turnId: "t6" });
  assert.deepEqual(nested, {
    ok: false,
    reason: "the directory is not in git and it holds a git repository (project/.git)",
  });
  assert.deepEqual(await listDir(state.path), [], "nothing made");
});

Deno.test("isolation: a working directory git ignores entirely is not isolated", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { ".gitignore": "build/\n", "a.txt": "a\n" });
  await writeFiles(repo.path, { "build/out.txt": "o\n" });
  const result = await isolator(state.path).isolate(join(repo.path, "build"), 2, { turnId: "t7" });
  assert.deepEqual(result, {
    ok: false,
    reason: "the working directory holds only files git ignores",
  });
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.deepEqual(await listDir(state.path), []);
});

Deno.test("isolation: a repository without commits yet still gets worktrees of its files", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  sh(repo.path, "init", "--quiet");
  await writeFiles(repo.path, { "first.txt": "1\n" });
  const isolation = await isolator(state.path).isolate(repo.path, 2, { turnId: "t8" });
  assert.ok(isolation.ok, isolation.ok ? "" : isolation.reason);
  try {
    assert.equal(await read(join(isolation.workspace.copies[1].cwd, "first.txt")), "1\n");
  } finally {
    await isolation.workspace.dispose();
  }
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("isolation: an already cancelled turn makes nothing", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const result = await isolator(state.path).isolate(repo.path, 2, {
    turnId: "t9",
    signal: AbortSignal.abort(),
  });
  assert.equal(result.ok, false);
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.deepEqual(await listDir(state.path), []);
});

Deno.test("isolation: git 2.38 or newer is needed, and a missing git is named", () => {
  assert.equal(gitVersionProblem([2, 38]), undefined);
  assert.equal(gitVersionProblem([3, 0]), undefined);
  assert.equal(
    gitVersionProblem([2, 37]),
    "git 2.37 is too old (isolated workspaces need 2.38 or newer)",
  );
  assert.equal(gitVersionProblem(undefined), "git is not installed (isolated workspaces need it)");
});
