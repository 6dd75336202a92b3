import assert from "node:assert/strict";
import { snapshot } from "../../src/workspace/snapshot.ts";
import { changedFiles } from "../../src/workspace/changes.ts";
import { gitRepo, sh, status, tempDir, writeFiles } from "../support/git_repos.ts";

Deno.test("snapshot: records uncommitted, deleted and untracked files, not ignored ones", async () => {
  await using repo = await tempDir();
  await using scratch = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n", "gone.txt": "x\n", ".gitignore": "*.log\n" });
  await writeFiles(repo.path, { "a.txt": "a changed\n", "new.txt": "new\n", "debug.log": "no\n" });
  await Deno.remove(`${repo.path}/gone.txt`);
  sh(repo.path, "add", "a.txt");
  const before = status(repo.path);
  const head = sh(repo.path, "rev-parse", "HEAD").trim();

  const commit = await snapshot({ path: repo.path }, { parent: head, scratch: scratch.path });

  const files = await changedFiles({ path: repo.path }, head, commit);
  assert.deepEqual(files.map((f) => f.path), ["a.txt", "gone.txt", "new.txt"]);
  assert.equal(sh(repo.path, "show", `${commit}:new.txt`), "new\n");
  assert.deepEqual(status(repo.path), before, "the user's index and files are as they were");
  assert.equal(sh(repo.path, "rev-parse", "HEAD").trim(), head, "HEAD did not move");
  assert.deepEqual(sh(repo.path, "rev-list", "--all").trim().split("\n"), [head], "no new ref");
  assert.deepEqual([...Deno.readDirSync(scratch.path)], [], "the private index is removed");
});

Deno.test("snapshot: a directory outside git is recorded through a private git dir", async () => {
  await using dir = await tempDir();
  await using scratch = await tempDir();
  await writeFiles(dir.path, { "notes.md": "hello\n", "sub/b.txt": "b\n" });
  const gitDir = `${scratch.path}/git`;
  sh(scratch.path, "init", "--quiet", "--bare", gitDir);
  const commit = await snapshot({ path: dir.path, gitDir }, { scratch: scratch.path });
  const listed = sh(scratch.path, "--git-dir", gitDir, "ls-tree", "-r", "--name-only", commit);
  assert.deepEqual(listed.trim().split("\n"), ["notes.md", "sub/b.txt"]);
  assert.deepEqual([...Deno.readDirSync(dir.path)].map((e) => e.name).sort(), ["notes.md", "sub"]);
});
