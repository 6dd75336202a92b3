/**
 * Isolated workspaces for one fanned-out turn: made from the real working directory (or a
 * session's kept worktrees reset to it), read back as each candidate's changes, one candidate's
 * changes applied to the real workspace, and all of it removed or, in a session's slot, cleaned
 * and kept for its next turn.
 */
import { join } from "node:path";
import { applyChanges, type ApplyResult } from "./apply.ts";
import { changedFiles, type Changes, patchText } from "./changes.ts";
import {
  type Copy,
  type CopyLimits,
  copyObstacle,
  gitVersion,
  headCommit,
  initPrivateGitDir,
  locate,
  type Location,
  makeCopies,
  makeWorktrees,
  removeWorktree,
} from "./copies.ts";
import { commonGitDir, type ResetTarget, resetWorktrees } from "./kept_worktree.ts";
import { type RegistryOptions, WorkspaceRegistry } from "./registry.ts";
import { snapshot, type WorkTree } from "./snapshot.ts";

/** A directory outside git is copied only up to this size (each child gets its own copy). */
const DEFAULT_COPY_LIMITS: CopyLimits = { maxFiles: 5_000, maxBytes: 50 * 2 ** 20 };
/** `git merge-tree --write-tree` (the three-way apply) arrived in git 2.38. */
const MIN_GIT: [number, number] = [2, 38];

interface IsolatorOptions extends RegistryOptions {
  /** Where turns' workspaces are kept (see `defaultWorkspaceRoot`). */
  root: string;
  copyLimits?: CopyLimits;
}

type Isolation =
  | { ok: true; workspace: IsolatedWorkspace }
  /** No isolation is possible: why, in words for a progress line. */
  | { ok: false; reason: string };

interface IsolateOptions {
  turnId: string;
  /** The session's slot: its turns reuse one path, so children's prompts stay cacheable. */
  slot?: string;
  signal?: AbortSignal;
}

export class Isolator {
  readonly registry: WorkspaceRegistry;
  readonly #limits: CopyLimits;
  #gitOk?: Promise<string | undefined>;
  #sweeping?: Promise<unknown>;

  constructor(options: IsolatorOptions) {
    this.registry = new WorkspaceRegistry(options.root, options);
    this.#limits = options.copyLimits ?? DEFAULT_COPY_LIMITS;
  }

  /** Makes `count` isolated copies of the workspace `cwd` (an existing absolute directory). */
  async isolate(cwd: string, count: number, options: IsolateOptions): Promise<Isolation> {
    const { signal } = options;
    // A start-up sweep removes directories named with this pid: let it finish first.
    await this.#sweeping?.catch(() => {});
    const gitProblem = await (this.#gitOk ??= gitProblemOf());
    if (gitProblem) return { ok: false, reason: gitProblem };
    let dir: string | undefined;
    try {
      signal?.throwIfAborted();
      const location = await locate(cwd, signal);
      const refusal = await this.#refusal(location, cwd);
      if (refusal) return { ok: false, reason: refusal };
      // The record names the repository before any worktree exists, for a crash's clean-up.
      const repo = location.kind === "git" ? location.top : undefined;
      const kept = repo && options.slot
        ? await this.registry.reopen(options.turnId, repo, options.slot)
        : undefined;
      dir = kept?.dir ?? await this.registry.open(options.turnId, repo, options.slot);
      let made: Made;
      try {
        made = await makeIn(dir, location, cwd, { count, kept: kept?.roots ?? [], signal });
      } catch (err) {
        // Kept worktrees a child broke (say, it deleted its `.git`): the slot is made afresh.
        if (!kept || signal?.aborted) throw err;
        await this.registry.remove(dir);
        dir = await this.registry.open(options.turnId, repo, options.slot);
        made = await makeIn(dir, location, cwd, { count, kept: [], signal });
      }
      // A cancel between two git calls would otherwise go unnoticed.
      signal?.throwIfAborted();
      if (await firstMissing(made.copies.map((c) => c.cwd))) {
        throw new Error("the working directory holds only files git ignores");
      }
      return { ok: true, workspace: new IsolatedWorkspace(made, dir, this.registry) };
    } catch (err) {
      // What cannot be removed now, the next turn in the slot or the next start's sweep removes.
      if (dir) await this.registry.remove(dir).catch(() => {});
      if (signal?.aborted) return { ok: false, reason: "the turn was cancelled" };
      if (err instanceof Error) return { ok: false, reason: err.message };
      throw err;
    }
  }

  /** Why the workspace at `location` is not isolated, if it is not. */
  async #refusal(location: Location, cwd: string): Promise<string | undefined> {
    if (location.kind === "unusable") return location.reason;
    if (location.kind === "git") return undefined;
    const obstacle = await copyObstacle(cwd, this.#limits);
    return obstacle && `the directory is not in git and ${obstacle}`;
  }

  /** Removes every kept slot (the gateway's shutdown). */
  shutdown(): Promise<void> {
    return this.registry.shutdown();
  }

  /** Removes the workspaces of gateways that stopped without cleaning up (see the registry). */
  sweep(): Promise<string[]> {
    const sweeping = this.registry.sweep();
    this.#sweeping = sweeping;
    return sweeping;
  }
}

/** What was made for a turn: the real workspace, the state the copies start from, the copies. */
interface Made {
  kind: "worktree" | "copy";
  real: WorkTree;
  base: string;
  /** What worktrees are (re)set to and the repository they belong to (absent for copies). */
  target?: ResetTarget;
  copies: Copy[];
  /** Each worktree's own git dir, in child order (absent for copies). */
  gitDirs?: string[];
  /** How many of the copies were kept from the session's last turn and reset, not made. */
  reset: number;
}

/** The turn's copies in `dir`: worktrees in a repository, plain copies outside one. */
async function makeIn(
  dir: string,
  location: Location,
  cwd: string,
  wanted: WorktreeCount,
): Promise<Made> {
  await Deno.mkdir(join(dir, "scratch"), { recursive: true });
  return location.kind === "git"
    ? await worktreesIn(dir, location, wanted)
    : await copiesIn(dir, cwd, wanted.count, wanted.signal);
}

interface WorktreeCount {
  count: number;
  /** The session's kept worktrees (roots under `dir`, in child order): reset, not made. */
  kept: readonly string[];
  signal?: AbortSignal;
}

/**
 * Worktrees of the repository at its current state, one per child, under `dir`: kept ones reset
 * in place (in parallel: each is its own worktree), extra kept ones removed, missing ones made.
 */
async function worktreesIn(
  dir: string,
  location: Extract<Location, { kind: "git" }>,
  { count, kept, signal }: WorktreeCount,
): Promise<Made> {
  const { top, relative } = location;
  const real = { path: top };
  const head = await headCommit(top, signal);
  const base = await snapshot(real, { parent: head, scratch: join(dir, "scratch"), signal });
  const target = { common: await commonGitDir(top, signal), snapshot: base, head };
  const roots = childRoots(dir, count);
  let n = 0;
  while (n < roots.length && kept[n] === roots[n]) n++;
  const reused = roots.slice(0, n);
  const gitDirs = await resetWorktrees(reused, target, signal);
  for (const extra of kept.slice(n)) await removeWorktree(top, extra);
  const made = await makeWorktrees(top, relative, target, roots.slice(reused.length), signal);
  const copies = [...reused.map((root) => ({ root, cwd: join(root, relative) })), ...made];
  gitDirs.push(...made.map((copy) => copy.gitDir));
  return {
    kind: "worktree",
    real,
    base,
    target,
    copies: copies.map(({ root, cwd }) => ({ root, cwd })),
    gitDirs,
    reset: reused.length,
  };
}

/** Plain copies of a directory outside git, recorded through a private git dir in `dir`. */
async function copiesIn(
  dir: string,
  cwd: string,
  count: number,
  signal?: AbortSignal,
): Promise<Made> {
  const real = { path: cwd, gitDir: join(dir, "git") };
  await initPrivateGitDir(real.gitDir, signal);
  const base = await snapshot(real, { scratch: join(dir, "scratch"), signal });
  return {
    kind: "copy",
    real,
    base,
    copies: await makeCopies(cwd, childRoots(dir, count), signal),
    reset: 0,
  };
}

function childRoots(dir: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => join(dir, `child-${i + 1}`));
}

/** One turn's copies and what can be done with them. */
export class IsolatedWorkspace {
  readonly kind: "worktree" | "copy";
  /** The real workspace's top (the repository's, or the copied directory). */
  readonly realRoot: string;
  /** How many copies were the session's kept worktrees, reset rather than made. */
  readonly reset: number;
  /** The copies outlive the turn: cleaned and kept for the session's next turn. */
  readonly kept: boolean;
  #real: WorkTree;
  #base: string;
  #target?: ResetTarget;
  #gitDirs: readonly string[];
  #copies: Copy[];
  #dir: string;
  #registry: WorkspaceRegistry;
  #disposed?: Promise<void>;

  constructor(made: Made, dir: string, registry: WorkspaceRegistry) {
    this.kind = made.kind;
    this.realRoot = made.real.path;
    this.reset = made.reset;
    this.kept = made.kind === "worktree" && registry.keeps(dir);
    this.#real = made.real;
    this.#base = made.base;
    this.#target = made.target;
    this.#gitDirs = made.gitDirs ?? [];
    this.#copies = made.copies;
    this.#dir = dir;
    this.#registry = registry;
  }

  /** One copy per child, in child order. */
  get copies(): readonly Copy[] {
    return this.#copies;
  }

  /** What the child working in copy `index` changed, relative to the state it started from. */
  async changes(index: number, signal?: AbortSignal): Promise<Changes> {
    const copy = this.#copies[index];
    // A worktree is read through its own git dir: a child may have removed or rewritten `.git`.
    const tree: WorkTree = { path: copy.root, gitDir: this.#gitDirs[index] ?? this.#real.gitDir };
    const commit = await snapshot(tree, { parent: this.#base, scratch: this.#scratch, signal });
    const files = await changedFiles(this.#real, this.#base, commit, signal);
    return { base: this.#base, commit, files };
  }

  /** The changes as a patch for a reader, cut to `maxChars`. */
  patch(changes: Changes, maxChars: number, signal?: AbortSignal): Promise<string> {
    return patchText(this.#real, changes, maxChars, signal);
  }

  /** Merges one candidate's changes into the real workspace, or says why it did not. */
  apply(changes: Changes, signal?: AbortSignal): Promise<ApplyResult> {
    return applyChanges(this.#real, changes, { scratch: this.#scratch, signal });
  }

  /**
   * Removes every copy and record of this turn; kept copies are instead cleaned of what the
   * children did (a child started ahead in one for the next turn sees none of it) and released.
   * Safe to call more than once.
   */
  dispose(): Promise<void> {
    return this.#disposed ??= this.#end();
  }

  async #end(): Promise<void> {
    const target = this.#target;
    if (this.kept && target) {
      const roots = this.#copies.map((copy) => copy.root);
      const cleaned = await resetWorktrees(roots, target).then(() => true, () => false);
      if (cleaned) return await this.#registry.release(this.#dir, { repo: this.realRoot, roots });
    }
    await this.#registry.remove(this.#dir);
  }

  get #scratch(): string {
    return join(this.#dir, "scratch");
  }
}

async function gitProblemOf(): Promise<string | undefined> {
  return gitVersionProblem(await gitVersion());
}

/** Why this git (its [major, minor], undefined when it does not run) cannot isolate, if so. */
export function gitVersionProblem(version: [number, number] | undefined): string | undefined {
  if (!version) return "git is not installed (isolated workspaces need it)";
  const [major, minor] = version;
  if (major > MIN_GIT[0] || (major === MIN_GIT[0] && minor >= MIN_GIT[1])) return undefined;
  return `git ${major}.${minor} is too old (isolated workspaces need ${
    MIN_GIT.join(".")
  } or newer)`;
}

async function firstMissing(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
    try {
      if ((await Deno.stat(path)).isDirectory) continue;
    } catch { /* missing */ }
    return path;
  }
  return undefined;
}
