/**
 * Applies one candidate's changes to the real workspace as a three-way merge: the candidate's
 * state and the workspace's state now, both on top of the base the candidate started from. A
 * workspace that changed underneath in a conflicting way is left untouched and the conflicting
 * files are named.
 */
import { changedFiles, type Changes, type FileChange } from "./changes.ts";
import { git, GitError } from "./git.ts";
import { snapshot, treeEnv, type WorkTree } from "./snapshot.ts";

export type ApplyResult =
  /** Written; `files` are the candidate's changes (already present ones included). */
  | { applied: true; files: FileChange[] }
  /** Nothing written: why, and the files that conflict (empty when the reason is not a merge). */
  | { applied: false; reason: string; conflicts: string[] };

interface ApplyOptions {
  /** A directory for private index files. */
  scratch: string;
  signal?: AbortSignal;
}

const encoder = new TextEncoder();

/** Merges `changes` into the working tree of `real`. Never leaves conflict markers behind. */
export async function applyChanges(
  real: WorkTree,
  changes: Changes,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const run = { cwd: real.path, env: treeEnv(real), signal: options.signal };
  const files = await changedFiles(real, changes.base, changes.commit, options.signal);
  if (files.length === 0) return { applied: true, files };
  const current = await snapshot(real, { parent: changes.base, ...options });
  // Both commits have the base as parent, so git finds it as the merge base.
  const merge = await git(
    ["merge-tree", "--write-tree", "--name-only", "--no-messages", current, changes.commit],
    { ...run, okCodes: [1] },
  );
  const [merged, ...conflicted] = merge.stdout.split("\n").filter(Boolean);
  if (merge.code === 1) {
    const conflicts = [...new Set(conflicted)];
    return {
      applied: false,
      conflicts,
      reason: `the workspace changed during the turn in a way that conflicts with these changes ` +
        `(${conflicts.join(", ") || "unknown files"})`,
    };
  }
  const patch = (await git(
    ["diff", "--binary", "--no-renames", "--no-color", "--no-ext-diff", current, merged, "--"],
    run,
  )).stdout;
  if (!patch) return { applied: true, files };
  try {
    // Plain apply checks every hunk's context first, so a file edited since the snapshot a
    // moment ago fails the whole patch rather than half of it.
    await git(["apply", "--whitespace=nowarn", "-"], { ...run, input: encoder.encode(patch) });
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    return {
      applied: false,
      conflicts: [],
      reason: `the workspace changed while the changes were being applied (${err.message})`,
    };
  }
  return { applied: true, files };
}
