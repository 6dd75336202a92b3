import assert from "node:assert/strict";
import { join } from "node:path";
import { type IsolatedWorkspace, Isolator } from "../../src/workspace/isolation.ts";
import { exists, gitRepo, read, sh, status, tempDir, writeFiles } from "../support/git_repos.ts";

const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("");

/** A repository with one isolated copy whose child edited line 2 of a.txt and added new.txt. */
async function candidate(repo: string, state: string, own: Record<string, string> = {}) {
  await gitRepo(repo, { "a.txt": TEN_LINES, "b.txt": "b\n", ...own });
  const isolation = await new Isolator({ root: state }).isolate(repo, 1, { turnId: "apply" });
  if (!isolation.ok) throw new Error(isolation.reason);
  const { workspace } = isolation;
  const copy = workspace.copies[0].cwd;
  await writeFiles(copy, {
    "a.txt": TEN_LINES.replace("line 2\n", "line 2 by the child\n"),
    "new.txt": "from the child\n",
  });
  return { workspace, changes: await workspace.changes(0) };
}

async function disposing<T>(workspace: IsolatedWorkspace, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await workspace.dispose();
  }
}

Deno.test("apply: a user's edit elsewhere during the turn is kept and merged with the candidate's", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  const { workspace, changes } = await candidate(repo.path, state.path);
  await disposing(workspace, async () => {
    await writeFiles(repo.path, { "a.txt": TEN_LINES.replace("line 9\n", "line 9 by the user\n") });
    sh(repo.path, "add", "a.txt");
    const result = await workspace.apply(changes);
    assert.equal(result.applied, true);
    assert.equal(
      await read(join(repo.path, "a.txt")),
      TEN_LINES.replace("line 2\n", "line 2 by the child\n").replace(
        "line 9\n",
        "line 9 by the user\n",
      ),
    );
    assert.equal(await read(join(repo.path, "new.txt")), "from the child\n");
    assert.deepEqual(status(repo.path), ["MM a.txt", "?? new.txt"], "the user's staging is kept");
  });
});

Deno.test("apply: a conflicting change made during the turn is refused and nothing is written", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  const { workspace, changes } = await candidate(repo.path, state.path);
  await disposing(workspace, async () => {
    const mine = TEN_LINES.replace("line 2\n", "line 2 by the user\n");
    await writeFiles(repo.path, { "a.txt": mine });
    const result = await workspace.apply(changes);
    assert.deepEqual(result, {
      applied: false,
      conflicts: ["a.txt"],
      reason: "the workspace changed during the turn in a way that conflicts with these changes " +
        "(a.txt)",
    });
    assert.equal(await read(join(repo.path, "a.txt")), mine, "no conflict markers");
    assert.equal(await exists(join(repo.path, "new.txt")), false, "not even the other file");
    assert.deepEqual(status(repo.path), [" M a.txt"]);
  });
});

Deno.test("apply: a file the user created during the turn where the candidate created one conflicts", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  const { workspace, changes } = await candidate(repo.path, state.path);
  await disposing(workspace, async () => {
    await writeFiles(repo.path, { "new.txt": "the user's own\n" });
    const result = await workspace.apply(changes);
    assert.equal(result.applied, false);
    assert.deepEqual(!result.applied && result.conflicts, ["new.txt"]);
    assert.equal(await read(join(repo.path, "new.txt")), "the user's own\n");
    assert.equal(await read(join(repo.path, "a.txt")), TEN_LINES);
  });
});

Deno.test("apply: changes the workspace already has apply as a no-op; deletions and binary files apply", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  const { workspace } = await candidate(repo.path, state.path, { "old.txt": "old\n" });
  await disposing(workspace, async () => {
    const copy = workspace.copies[0].cwd;
    await Deno.remove(join(copy, "old.txt"));
    const bytes = new Uint8Array([0, 1, 2, 255, 0, 10, 13]);
    await Deno.writeFile(join(copy, "blob.bin"), bytes);
    const changes = await workspace.changes(0);
    assert.deepEqual(
      changes.files.map((f) => [f.path, f.binary]),
      [["a.txt", false], ["blob.bin", true], ["new.txt", false], ["old.txt", false]],
    );
    // The user already made one of the same edits.
    await writeFiles(repo.path, { "new.txt": "from the child\n" });
    const result = await workspace.apply(changes);
    assert.equal(result.applied, true);
    assert.deepEqual(await Deno.readFile(join(repo.path, "blob.bin")), bytes);
    assert.equal(await exists(join(repo.path, "old.txt")), false);
    assert.equal(await read(join(repo.path, "new.txt")), "from the child\n");
  });
});

Deno.test("apply: a candidate that changed nothing applies nothing", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "a.txt": "a\n" });
  const isolation = await new Isolator({ root: state.path }).isolate(repo.path, 2, {
    turnId: "none",
  });
  assert.ok(isolation.ok);
  await disposing(isolation.workspace, async () => {
    const changes = await isolation.workspace.changes(1);
    assert.deepEqual(changes.files, []);
    assert.deepEqual(await isolation.workspace.apply(changes), { applied: true, files: [] });
    assert.deepEqual(status(repo.path), []);
  });
});
