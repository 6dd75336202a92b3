/**
 * Resets a session's kept worktree in place, only once it is checked to still be the worktree
 * the gateway made: git is never let to search upward from it (a child that deleted its `.git`
 * would otherwise lead git to the user's own repository above), and one holding per-worktree git
 * state a fresh worktree lacks (a bisect, a rebase, a sparse checkout, a lock) is broken.
 */
import { dirname, join } from "node:path";
import { git } from "./git.ts";

/** A kept worktree that cannot be reset in place: the caller removes it and makes it afresh. */
export class BrokenWorktree extends Error {
  override name = "BrokenWorktree";
  constructor(readonly root: string, why: string) {
    super(`the isolated workspace ${root} is broken: ${why}`);
  }
}

/** What a worktree is reset to, and the repository it must belong to. */
export interface ResetTarget {
  /** The repository's common git dir (real path), from `commonGitDir`. */
  common: string;
  /** The commit whose files it gets (the workspace's state). */
  snapshot: string;
  /** The commit it then points at (HEAD), when the repository has one. */
  head?: string;
}

/** The real path of the common git dir of the repository whose top is `top`. */
export async function commonGitDir(top: string, signal?: AbortSignal): Promise<string> {
  const out = await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], {
    cwd: top,
    signal,
  });
  return await Deno.realPath(out.stdout.trim());
}

/** Variables that confine git to the directory `root`: it never looks above it for a `.git`. */
export function confinedTo(root: string): Record<string, string> {
  return { GIT_CEILING_DIRECTORIES: dirname(root) };
}

/**
 * The private git dir of the worktree at `root`, once checked: git finds a repository at `root`
 * itself (not above it), it shares the common dir `common`, it is a linked worktree's (not the
 * main one's) and that git dir records `root` as its worktree (not another of the user's).
 */
export async function worktreeGitDir(
  root: string,
  common: string,
  signal?: AbortSignal,
): Promise<string> {
  const args = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir"];
  const out = await git([...args, "--git-common-dir"], {
    cwd: root,
    env: confinedTo(root),
    okCodes: [128],
    signal,
  });
  if (out.code !== 0) throw new BrokenWorktree(root, "git finds no worktree there");
  const [top, gitDir, ownCommon] = await Promise.all(
    out.stdout.trim().split("\n").map((path) => Deno.realPath(path).catch(() => path)),
  );
  if (top !== root) throw new BrokenWorktree(root, `git finds ${top} instead`);
  if (ownCommon !== common || gitDir === common) {
    throw new BrokenWorktree(root, "it is no longer a linked worktree of the repository");
  }
  const recorded = await Deno.readTextFile(join(gitDir, "gitdir")).catch(() => "");
  const back = await Deno.realPath(dirname(recorded.trim())).catch(() => "");
  if (back !== root) throw new BrokenWorktree(root, "its git dir belongs to another worktree");
  return gitDir;
}

/** What a fresh (or freshly reset) worktree's private git dir holds. */
const FRESH_ENTRIES = new Set(["HEAD", "ORIG_HEAD", "commondir", "gitdir", "index", "logs"]);
/** Left by a commit or a fetch, and read by nothing a reset keeps. */
const HARMLESS_ENTRIES = new Set(["COMMIT_EDITMSG", "FETCH_HEAD"]);

/** Per-worktree git state a fresh worktree lacks (rebase-merge, BISECT_LOG, locked, …). */
export async function leftoverGitState(gitDir: string): Promise<string[]> {
  const extra: string[] = [];
  for await (const entry of Deno.readDir(gitDir)) {
    const name = entry.name;
    if (FRESH_ENTRIES.has(name) || HARMLESS_ENTRIES.has(name)) continue;
    // An empty refs/ (some git versions make one) holds no state.
    if (name === "refs" && (await Array.fromAsync(walkFiles(join(gitDir, name)))).length === 0) {
      continue;
    }
    extra.push(name);
  }
  return extra.sort();
}

async function* walkFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walkFiles(path);
    else yield path;
  }
}

/**
 * Brings a worktree made on an earlier turn to exactly the state a fresh one would have, in
 * place: `snapshot` checked out over whatever a child changed, every file it does not hold
 * removed (ignored ones and nested repositories too), then pointed back at `head`. The directory
 * stays, so a process waiting in it keeps a valid working directory. Returns its git dir; throws
 * `BrokenWorktree` when it is not safely the gateway's worktree any more.
 */
export async function resetWorktree(
  root: string,
  target: ResetTarget,
  signal?: AbortSignal,
): Promise<string> {
  const gitDir = await worktreeGitDir(root, target.common, signal);
  const leftover = await leftoverGitState(gitDir);
  if (leftover.length > 0) {
    throw new BrokenWorktree(root, `it holds git state of its own (${leftover.join(", ")})`);
  }
  // Named explicitly: whatever a `.git` in `root` says now, these touch this worktree only.
  const env = { ...confinedTo(root), GIT_DIR: gitDir, GIT_WORK_TREE: root };
  const run = { cwd: root, env, signal };
  await git(["checkout", "--detach", "--force", "--quiet", target.snapshot], run);
  await git(["clean", "-ffdxq"], run);
  if (target.head) await git(["reset", "--quiet", target.head], run);
  return gitDir;
}

/**
 * Resets every worktree at once (each is its own); fails with the first failure only once every
 * reset has settled, so no git still runs in a directory the caller then removes.
 */
export async function resetWorktrees(
  roots: readonly string[],
  target: ResetTarget,
  signal?: AbortSignal,
): Promise<string[]> {
  const settled = await Promise.allSettled(
    roots.map((root) => resetWorktree(root, target, signal)),
  );
  const failed = settled.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<string>).value);
}
