/**
 * Where isolated workspaces live and who owns them: one directory per turn under a known root,
 * named after the owning gateway process and holding a record of the repository whose
 * worktrees it contains, so the turn's clean-up, and the next start after a crash, can remove
 * every worktree and copy.
 */
import process from "node:process";
import { join } from "node:path";
import { git } from "./git.ts";

/** What a turn's directory records before any worktree is made in it. */
interface WorkspaceRecord {
  version: 1;
  pid: number;
  turnId: string;
  createdAt: string;
  /** The top of the user's repository whose worktrees live here (absent for plain copies). */
  repo?: string;
}

const RECORD = "record.json";

/** `$XDG_STATE_HOME/council-gateway/workspaces`, else `~/.local/state/council-gateway/…`. */
export function defaultWorkspaceRoot(
  env: (name: string) => string | undefined,
): string | undefined {
  const home = env("HOME");
  const state = env("XDG_STATE_HOME") || (home ? join(home, ".local", "state") : undefined);
  return state?.startsWith("/") ? join(state, "council-gateway", "workspaces") : undefined;
}

/** Whether a process runs (one of another user counts: it exists). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

export interface RegistryOptions {
  /** The owning process (default: this one). */
  pid?: number;
  isAlive?: (pid: number) => boolean;
}

export class WorkspaceRegistry {
  readonly #root: string;
  readonly #pid: number;
  readonly #isAlive: (pid: number) => boolean;

  constructor(root: string, options: RegistryOptions = {}) {
    this.#root = root;
    this.#pid = options.pid ?? Deno.pid;
    this.#isAlive = options.isAlive ?? processAlive;
  }

  /** Makes the turn's directory (private to this user) with its record; returns its path. */
  async open(turnId: string, repo?: string): Promise<string> {
    await Deno.mkdir(this.#root, { recursive: true, mode: 0o700 });
    const root = await Deno.realPath(this.#root);
    const name = `${this.#pid}-${turnId.replace(/[^\w.-]/g, "_")}-${randomHex()}`;
    const dir = join(root, name);
    await Deno.mkdir(dir, { mode: 0o700 });
    const record: WorkspaceRecord = {
      version: 1,
      pid: this.#pid,
      turnId,
      createdAt: new Date().toISOString(),
      ...(repo ? { repo } : {}),
    };
    await Deno.writeTextFile(join(dir, RECORD), JSON.stringify(record));
    return dir;
  }

  /** Removes a turn's directory: its worktrees from their repository, then every file. */
  async remove(dir: string): Promise<void> {
    const record = await readRecord(dir);
    if (record?.repo) await removeWorktrees(record.repo, dir);
    await Deno.remove(dir, { recursive: true }).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
  }

  /**
   * At start-up: removes the directories of gateways that no longer run (a crash, a kill), and
   * of an earlier process that had this one's pid. Returns the directories removed.
   */
  async sweep(): Promise<string[]> {
    const removed: string[] = [];
    let root: string;
    let entries: Deno.DirEntry[];
    try {
      // Real path, as `open` records it in the repositories' worktree lists.
      root = await Deno.realPath(this.#root);
      entries = await Array.fromAsync(Deno.readDir(root));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return removed;
      throw err;
    }
    for (const entry of entries) {
      const pid = Number(/^(\d+)-/.exec(entry.name)?.[1]);
      if (!entry.isDirectory || !pid) continue;
      if (pid !== this.#pid && this.#isAlive(pid)) continue;
      const dir = join(root, entry.name);
      await this.remove(dir);
      removed.push(dir);
    }
    return removed;
  }
}

async function readRecord(dir: string): Promise<WorkspaceRecord | undefined> {
  try {
    const record = JSON.parse(await Deno.readTextFile(join(dir, RECORD)));
    return record?.version === 1 ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Unregisters (and deletes) the repository's worktrees that live under `dir`. */
async function removeWorktrees(repo: string, dir: string): Promise<void> {
  let listing: string;
  try {
    listing = (await git(["worktree", "list", "--porcelain"], { cwd: repo })).stdout;
  } catch {
    return; // The repository is gone or unreadable: only our files are left to delete.
  }
  const paths = listing.split("\n").flatMap((line) =>
    line.startsWith("worktree ") ? [line.slice("worktree ".length)] : []
  ).filter((path) => path.startsWith(`${dir}/`));
  for (const path of paths) {
    // Twice forced: also when a child locked it or left changes behind.
    await git(["worktree", "remove", "--force", "--force", path], { cwd: repo }).catch(() => {});
  }
}

function randomHex(): string {
  return [...crypto.getRandomValues(new Uint8Array(4))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}
