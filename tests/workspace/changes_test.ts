import assert from "node:assert/strict";
import { describeFiles, parseNumstat, patchText } from "../../src/workspace/changes.ts";
import { snapshot } from "../../src/workspace/snapshot.ts";
import { gitRepo, sh, tempDir, writeFiles } from "../support/git_repos.ts";

Deno.test("changes: numstat records with tabs in names and binary files", () => {
  assert.deepEqual(parseNumstat("3\t1\tsrc/a.ts\0-\t-\tlogo.png\0" + "0\t2\tname\twith tab\0"), [
    { path: "src/a.ts", added: 3, removed: 1, binary: false },
    { path: "logo.png", added: 0, removed: 0, binary: true },
    { path: "name\twith tab", added: 0, removed: 2, binary: false },
  ]);
  assert.deepEqual(parseNumstat(""), []);
});

Deno.test("changes: a summary names files with +/- counts, at most a limit of them", () => {
  const file = (path: string) => ({ path, added: 2, removed: 1, binary: false });
  assert.equal(describeFiles([]), "no files");
  assert.equal(describeFiles([file("a.ts")]), "1 file: a.ts +2 −1");
  assert.equal(
    describeFiles([file("a"), { path: "b.png", added: 0, removed: 0, binary: true }, file("c")], 2),
    "3 files: a +2 −1, b.png (binary), and 1 more",
  );
});

Deno.test("changes: the patch for a reader is cut at a line and says how much is left", async () => {
  await using repo = await tempDir();
  await using scratch = await tempDir();
  await gitRepo(repo.path, { "a.txt": "one\n" });
  const base = sh(repo.path, "rev-parse", "HEAD").trim();
  await writeFiles(repo.path, { "a.txt": "one\n" + "added line\n".repeat(200) });
  const commit = await snapshot({ path: repo.path }, { parent: base, scratch: scratch.path });
  const changes = { base, commit, files: [] };
  const whole = await patchText({ path: repo.path }, changes, 100_000);
  assert.match(whole, /^diff --git a\/a.txt b\/a.txt/);
  assert.equal(whole.split("\n+added line").length - 1, 200);
  const cut = await patchText({ path: repo.path }, changes, 300);
  assert.ok(cut.length < 400);
  assert.match(cut, /\n\[… \d+ more characters of this diff not shown\]\n$/);
  assert.ok(cut.split("\n").slice(0, -2).every((line) => whole.includes(`${line}\n`)));
});
