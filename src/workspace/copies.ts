/**
 * Makes the isolated copies a turn's children work in: git worktrees at the workspace's state
 * (HEAD plus uncommitted and untracked, not-ignored changes) inside a repository, or plain
 * (copy-on-write where the filesystem can) copies of a small directory outside git.
 */
import { join, relative, sep } from "node:path";
import { git, GitError, gitValue } from "./git.ts";
import { confinedTo, type ResetTarget, worktreeGitDir } from "./kept_worktree.ts";

/** One child's isolated workspace: its top directory and where the child starts in it. */
export interface Copy {
  root: string;
  cwd: string;
}

/** A worktree copy and its own git dir (its changes are read through it, not its `.git`). */
export interface WorktreeCopy extends Copy {
  gitDir: string;
}

/** Where a working directory sits. */
export type Location =
  /** Inside a repository's working tree: its top, and the directory relative to it. */
  | { kind: "git"; top: string; relative: string }
  /** Outside any repository. */
  | { kind: "plain" }
  /** Git refused to look (e.g. a repository owned by another user): its reason. */
  | { kind: "unusable"; reason: string };

export async function locate(cwd: string, signal?: AbortSignal): Promise<Location> {
  const probe = await git(["rev-parse", "--show-toplevel"], { cwd, okCodes: [128], signal });
  if (probe.code === 0) {
    const top = await Deno.realPath(probe.stdout.trim());
    return { kind: "git", top, relative: relative(top, cwd) };
  }
  if (/not a git repository/i.test(probe.stderr)) return { kind: "plain" };
  return { kind: "unusable", reason: `git: ${probe.stderr.trim().split("\n").at(-1)}` };
}

/** The commit HEAD names, or undefined in a repository without commits yet. */
export async function headCommit(top: string, signal?: AbortSignal): Promise<string | undefined> {
  const head = await git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], {
    cwd: top,
    okCodes: [1],
    signal,
  });
  return head.code === 0 ? head.stdout.trim() : undefined;
}

/**
 * One worktree per child, checked out at `snapshot` (the workspace's state), then pointed back
 * at `head` without touching its files: a child sees HEAD with the user's uncommitted and
 * untracked changes on top, as `git status` and `git diff` show them.
 */
export async function makeWorktrees(
  top: string,
  relativeCwd: string,
  target: ResetTarget,
  dirs: readonly string[],
  signal?: AbortSignal,
): Promise<WorktreeCopy[]> {
  const { snapshot, head } = target;
  const copies: WorktreeCopy[] = [];
  for (const root of dirs) {
    // Forced: a worktree of ours whose directory is gone while git still lists it (a child
    // broke a kept one, a removal failed) is taken over; the directory is always ours.
    await git(["worktree", "add", "--force", "--detach", "--quiet", root, snapshot], {
      cwd: top,
      signal,
    });
    const gitDir = await worktreeGitDir(root, target.common, signal);
    const env = { ...confinedTo(root), GIT_DIR: gitDir, GIT_WORK_TREE: root };
    if (head) await git(["reset", "--quiet", head], { cwd: root, env, signal });
    copies.push({ root, cwd: join(root, relativeCwd), gitDir });
  }
  return copies;
}

/** Unregisters and deletes one worktree of the repository at `top` (best effort). */
export async function removeWorktree(top: string, root: string): Promise<void> {
  // Twice forced: also when a child locked it or left changes behind.
  await git(["worktree", "remove", "--force", "--force", root], { cwd: top }).catch(() => {});
}

/** Limits for copying a directory outside git. */
export interface CopyLimits {
  maxFiles: number;
  maxBytes: number;
}

/** Why a directory cannot be copied (too large, holds a repository), or undefined when it can. */
export async function copyObstacle(dir: string, limits: CopyLimits): Promise<string | undefined> {
  let files = 0;
  let bytes = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for await (const entry of Deno.readDir(current)) {
      const path = join(current, entry.name);
      if (entry.name === ".git") {
        return `it holds a git repository (${relative(dir, current) || "."}${sep}.git)`;
      }
      if (entry.isDirectory) {
        pending.push(path);
        continue;
      }
      files++;
      if (entry.isFile) bytes += (await Deno.lstat(path)).size;
      if (files > limits.maxFiles || bytes > limits.maxBytes) {
        return `it is larger than a copy is made for (${limits.maxFiles} file` +
          `${limits.maxFiles === 1 ? "" : "s"} or ${formatSize(limits.maxBytes)})`;
      }
    }
  }
  return undefined;
}

/** Plain copies, cloned where the filesystem supports it (reflinks on Linux, clonefile on macOS). */
export async function makeCopies(
  source: string,
  dirs: readonly string[],
  signal?: AbortSignal,
): Promise<Copy[]> {
  const clone = Deno.build.os === "linux"
    ? ["--reflink=auto"]
    : Deno.build.os === "darwin"
    ? ["-c"]
    : [];
  for (const root of dirs) {
    const out = await new Deno.Command("cp", {
      args: ["-a", ...clone, source, root],
      stdout: "null",
      stderr: "piped",
      signal,
    }).output();
    if (!out.success) {
      throw new Error(`cp failed: ${new TextDecoder().decode(out.stderr).trim().split("\n")[0]}`);
    }
  }
  return dirs.map((root) => ({ root, cwd: root }));
}

/** A private git dir that records a directory outside any repository. */
export async function initPrivateGitDir(gitDir: string, signal?: AbortSignal): Promise<void> {
  // Bare: it has no working tree of its own; GIT_WORK_TREE names the directory it records.
  await git(["init", "--quiet", "--bare", gitDir], { cwd: "/", signal });
}

/** The git version as [major, minor], or undefined when git cannot run. */
export async function gitVersion(): Promise<[number, number] | undefined> {
  try {
    const text = await gitValue(["version"], { cwd: "/" });
    const match = /(\d+)\.(\d+)/.exec(text);
    return match ? [Number(match[1]), Number(match[2])] : undefined;
  } catch (err) {
    if (err instanceof GitError || err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** `50 MiB`, `12 KiB`, `10 bytes`. */
function formatSize(bytes: number): string {
  if (bytes >= 2 ** 20) return `${Math.round(bytes / 2 ** 20)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}
