/**
 * Records the current state of a working tree (tracked changes, deletions and untracked files
 * not ignored) as a commit, through a private copy of its index: the tree's own index, files
 * and refs are left exactly as they were.
 */
import { join } from "node:path";
import { git, gitValue } from "./git.ts";

/** A directory git can read: a repository's working tree, or a plain one via a private git dir. */
export interface WorkTree {
  /** The directory whose files are recorded. */
  path: string;
  /** For a directory outside any repository: the private git dir that records it. */
  gitDir?: string;
}

/** The variables that point git at a working tree read through a private git dir. */
export function treeEnv(tree: WorkTree): Record<string, string> {
  return tree.gitDir ? { GIT_DIR: tree.gitDir, GIT_WORK_TREE: tree.path } : {};
}

interface SnapshotOptions {
  /** The commit the snapshot builds on (the base it is later compared against), if any. */
  parent?: string;
  /** A directory for the private index (removed by the caller with its turn). */
  scratch: string;
  signal?: AbortSignal;
}

/** The commit id of the tree's state now. */
export async function snapshot(tree: WorkTree, options: SnapshotOptions): Promise<string> {
  const env = treeEnv(tree);
  const run = { cwd: tree.path, env, signal: options.signal };
  const ownIndex = await gitValue(
    ["rev-parse", "--path-format=absolute", "--git-path", "index"],
    run,
  );
  const index = join(options.scratch, `index-${crypto.randomUUID()}`);
  try {
    // Starting from the tree's own index keeps its stat data: unchanged files are not re-read.
    await Deno.copyFile(ownIndex, index).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
    const withIndex = { ...run, env: { ...env, GIT_INDEX_FILE: index } };
    await git(["add", "--all", "--", ":/"], withIndex);
    const tree = await gitValue(["write-tree"], withIndex);
    const parents = options.parent ? ["-p", options.parent] : [];
    return await gitValue(["commit-tree", tree, ...parents, "-m", "council-gateway snapshot"], run);
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}
