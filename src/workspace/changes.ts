/**
 * What a candidate changed: the files between two recorded states with their +/- line counts,
 * the patch text a synthesizer reads, and the one-line summary progress and answers show.
 */
import { git } from "./git.ts";
import { treeEnv, type WorkTree } from "./snapshot.ts";

/** One changed file. Binary files have no line counts. */
export interface FileChange {
  path: string;
  added: number;
  removed: number;
  binary: boolean;
}

/** A candidate's changes: its recorded state on top of the base, and the files that differ. */
export interface Changes {
  base: string;
  commit: string;
  files: FileChange[];
}

/** Parses `git diff --numstat -z --no-renames` output. */
export function parseNumstat(output: string): FileChange[] {
  return output.split("\0").filter(Boolean).map((record) => {
    const [added, removed, ...rest] = record.split("\t");
    const binary = added === "-" && removed === "-";
    return {
      path: rest.join("\t"),
      added: binary ? 0 : Number(added),
      removed: binary ? 0 : Number(removed),
      binary,
    };
  });
}

/** The files that differ between two commits of the repository `repo` reads. */
export async function changedFiles(
  repo: WorkTree,
  base: string,
  commit: string,
  signal?: AbortSignal,
): Promise<FileChange[]> {
  const { stdout } = await git(["diff", "--numstat", "-z", "--no-renames", base, commit, "--"], {
    cwd: repo.path,
    env: treeEnv(repo),
    signal,
  });
  return parseNumstat(stdout);
}

/** The patch a reader sees (binary files named, not spelled out), cut to `maxChars`. */
export async function patchText(
  repo: WorkTree,
  changes: Changes,
  maxChars: number,
  signal?: AbortSignal,
): Promise<string> {
  const { stdout } = await git(
    ["diff", "--no-renames", "--no-color", "--no-ext-diff", changes.base, changes.commit, "--"],
    { cwd: repo.path, env: treeEnv(repo), signal },
  );
  if (stdout.length <= maxChars) return stdout;
  const cut = stdout.lastIndexOf("\n", maxChars) + 1 || maxChars;
  return `${stdout.slice(0, cut)}[… ${
    stdout.length - cut
  } more characters of this diff not shown]\n`;
}

/** One file as progress shows it: `src/a.ts +3 −1`, or `logo.png (binary)`. */
function describeFile(file: FileChange): string {
  return file.binary ? `${file.path} (binary)` : `${file.path} +${file.added} −${file.removed}`;
}

/** `2 files: src/a.ts +3 −1, README.md +10 −0`, at most `limit` named, or `no files`. */
export function describeFiles(files: readonly FileChange[], limit = 8): string {
  if (files.length === 0) return "no files";
  const named = files.slice(0, limit).map(describeFile).join(", ");
  const more = files.length > limit ? `, and ${files.length - limit} more` : "";
  return `${files.length} file${files.length === 1 ? "" : "s"}: ${named}${more}`;
}
