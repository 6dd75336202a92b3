/**
 * Where isolated workspaces live and who owns them: one directory per turn (or per session, kept
 * between its turns) under a known root, holding a record of its owning gateway process and of
 * the repository whose worktrees it contains, so the turn's clean-up, an idle slot's reaping, the
 * gateway's shutdown and the next start after a crash can remove every worktree and copy.
 */
import { basename, join } from "node:path";
import { type Clock, systemClock, type TimerId } from "../base/clock.ts";
import { removeWorktree } from "./copies.ts";
import { git } from "./git.ts";
import { ownerAlive, processIdentity } from "./process_identity.ts";

/** What a turn's directory records before any worktree is made in it. */
interface WorkspaceRecord {
  version: 1;
  pid: number;
  /** The owning process's start (process_identity.ts): a zombie or a reused pid is not it. */
  identity?: string;
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

export interface RegistryOptions {
  /** The owning process (default: this one). */
  pid?: number;
  /** Whether the owner recorded as `pid` (with its `identity`, when recorded) still runs. */
  isAlive?: (pid: number, identity?: string) => boolean;
  /** Keep session slots between turns (absent: a slot is removed when its turn ends). */
  keep?: KeepSlots;
  /** Deletes a directory and everything in it (default: `Deno.remove`; tests inject failures). */
  removeDir?: (dir: string) => Promise<void>;
}

/** How long a session's slot is kept between its turns. */
export interface KeepSlots {
  /** A kept slot no turn has reopened for this long is removed. */
  idleMs: number;
  clock?: Clock;
}

/** A released slot's worktrees, waiting for the session's next turn. */
export interface KeptWorktrees {
  /** The top of the repository they belong to. */
  repo: string;
  /** Their roots, in child order. */
  roots: readonly string[];
}

export class WorkspaceRegistry {
  readonly #root: string;
  readonly #pid: number;
  readonly #isAlive: (pid: number, identity?: string) => boolean;
  readonly #identity: string | undefined;
  /** Session slots this process's running turns hold (known without asking `ps`). */
  readonly #heldSlots = new Set<string>();
  readonly #keep: Required<KeepSlots> | undefined;
  readonly #removeDir: (dir: string) => Promise<void>;
  /** Released slots, by directory, until a turn reopens them or they are reaped. */
  readonly #kept = new Map<string, KeptWorktrees & { timer: TimerId }>();
  #stopped = false;

  constructor(root: string, options: RegistryOptions = {}) {
    this.#root = root;
    this.#pid = options.pid ?? Deno.pid;
    this.#isAlive = options.isAlive ?? ownerAlive;
    this.#identity = options.pid === undefined ? processIdentity(Deno.pid) : undefined;
    this.#keep = options.keep && { clock: systemClock, ...options.keep };
    this.#removeDir = options.removeDir ?? ((dir) => Deno.remove(dir, { recursive: true }));
  }

  /** Whether `dir` outlives its turn: a session's slot while slots are kept. */
  keeps(dir: string): boolean {
    return this.#keep !== undefined && !this.#stopped && basename(dir).startsWith(SLOT_PREFIX);
  }

  /**
   * The session's kept slot, claimed for this turn when it holds worktrees of `repo` (its record
   * rewritten for the turn); undefined when there is none. One kept for another repository is
   * removed, so that `open` makes the slot afresh.
   */
  async reopen(
    turnId: string,
    repo: string,
    slot: string,
  ): Promise<{ dir: string; roots: readonly string[] } | undefined> {
    const dir = join(await Deno.realPath(this.#root).catch(() => this.#root), slotName(slot));
    const kept = this.#unkeep(dir);
    if (!kept) return undefined;
    if (kept.repo !== repo) {
      await this.#reap(dir);
      return undefined;
    }
    this.#heldSlots.add(dir);
    await this.#writeRecord(dir, turnId, repo).catch(async (err) => {
      await this.remove(dir);
      throw err;
    });
    return { dir, roots: kept.roots };
  }

  /**
   * The turn in a kept slot is over: its worktrees (already cleaned) wait for the session's next
   * turn, and are removed after `idleMs` without one. Any other directory is removed.
   */
  async release(dir: string, worktrees: KeptWorktrees): Promise<void> {
    if (!this.keeps(dir) || !this.#heldSlots.has(dir)) return await this.remove(dir);
    const timer = this.#keep!.clock.setTimeout(() => {
      if (this.#unkeep(dir)) void this.#reap(dir);
    }, this.#keep!.idleMs);
    this.#kept.set(dir, { ...worktrees, timer });
    this.#heldSlots.delete(dir);
  }

  /** Slots kept now, waiting for their sessions' next turns. */
  get kept(): number {
    return this.#kept.size;
  }

  /** Removes every kept slot, and keeps none from now on (the gateway's shutdown). */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    const dirs = [...this.#kept.keys()].filter((dir) => this.#unkeep(dir));
    await Promise.all(dirs.map((dir) => this.#reap(dir)));
  }

  /** Takes `dir` out of the kept slots (its timer cleared); what it held, if it was kept. */
  #unkeep(dir: string): KeptWorktrees | undefined {
    const kept = this.#kept.get(dir);
    if (!kept) return undefined;
    this.#kept.delete(dir);
    this.#keep!.clock.clearTimeout(kept.timer);
    return kept;
  }

  /** Removes a slot no turn holds; a turn claiming it meanwhile gets a path of its own. */
  async #reap(dir: string): Promise<void> {
    this.#heldSlots.add(dir);
    // The next start's sweep removes what cannot be removed now.
    await this.remove(dir).catch(() => this.#heldSlots.delete(dir));
  }

  /**
   * Makes the turn's directory (private to this user) with its record; returns its path.
   *
   * With a `slot` (a session's), the directory is the slot's own, the same on every turn of the
   * session: children's prompts and their CLIs' own system prompts name their working copy, and
   * a path that changed every turn would change every child's cacheable prompt prefix. A slot
   * still held by another running turn gives this turn a directory of its own instead.
   */
  async open(turnId: string, repo?: string, slot?: string): Promise<string> {
    await Deno.mkdir(this.#root, { recursive: true, mode: 0o700 });
    const root = await Deno.realPath(this.#root);
    const dir = (slot && await this.#claimSlot(root, slot)) ||
      await makeDir(join(root, `${this.#pid}-${safeName(turnId)}-${randomHex()}`));
    await this.#writeRecord(dir, turnId, repo);
    return dir;
  }

  async #writeRecord(dir: string, turnId: string, repo?: string): Promise<void> {
    const record: WorkspaceRecord = {
      version: 1,
      pid: this.#pid,
      ...(this.#identity ? { identity: this.#identity } : {}),
      turnId,
      createdAt: new Date().toISOString(),
      ...(repo ? { repo } : {}),
    };
    await Deno.writeTextFile(join(dir, RECORD), JSON.stringify(record));
  }

  /**
   * Whether a live gateway other than this one owns the directory: its record's owner, by pid
   * and start time, else the pid its name starts with (a turn that died before its record).
   */
  async #ownedByLive(dir: string, name: string): Promise<boolean> {
    const record = await readRecord(dir);
    const pid = record?.pid ?? Number(/^(\d+)-/.exec(name)?.[1]);
    if (!pid) {
      // A slot whose record was never written: its turn died at once, or is opening now.
      return !name.startsWith(SLOT_PREFIX) || !(await olderThan(dir, TORN_RECORD_MS));
    }
    if (record?.identity !== undefined && record.identity === this.#identity) return false;
    if (pid === this.#pid && record?.identity === undefined) return false;
    return this.#isAlive(pid, record?.identity);
  }

  /** The slot's directory, made for this turn; undefined while a live gateway's turn holds it. */
  async #claimSlot(root: string, slot: string): Promise<string | undefined> {
    const dir = join(root, slotName(slot));
    // Another turn of this session runs here now: no need to ask who owns it.
    if (this.#heldSlots.has(dir)) return undefined;
    // Kept for worktrees this turn does not reuse (it makes a plain copy): made afresh.
    if (this.#unkeep(dir)) await this.#reap(dir);
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await makeDir(dir).then(() => true, alreadyExists)) {
        this.#heldSlots.add(dir);
        return dir;
      }
      // Another turn of this session took it while this one waited for the file system.
      if (this.#heldSlots.has(dir)) return undefined;
      // Left behind by a turn that is over (this process's, whose clean-up failed, or a gateway
      // that is gone): clean it up and take it.
      const record = await readRecord(dir);
      if (this.#heldSlots.has(dir)) return undefined;
      const ours = record?.pid === this.#pid && record.identity === this.#identity;
      if (record && !ours && this.#isAlive(record.pid, record.identity)) return undefined;
      if (!record && !(await olderThan(dir, TORN_RECORD_MS))) return undefined;
      await this.remove(dir);
    }
    return undefined;
  }

  /**
   * Removes a turn's directory: its worktrees from their repository, then every file (twice if
   * need be: a process just ending in it may still have added one).
   */
  async remove(dir: string): Promise<void> {
    try {
      const record = await readRecord(dir);
      if (record?.repo) await removeWorktrees(record.repo, dir);
      await this.#removeDir(dir).catch(() => this.#removeDir(dir)).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    } finally {
      // Once it is gone, or cannot be: a slot left in place is ours, and the session's next turn
      // removes it and takes its path again (a turn claiming it meanwhile gets a path of its own).
      this.#heldSlots.delete(dir);
    }
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
      if (!entry.isDirectory) continue;
      const dir = join(root, entry.name);
      if (await this.#ownedByLive(dir, entry.name)) continue;
      await this.remove(dir);
      removed.push(dir);
    }
    return removed;
  }
}

/** A session slot's directory name starts so; a turn's own starts with its gateway's pid. */
const SLOT_PREFIX = "s-";
/** A directory without its record for this long was left by a turn that died opening it. */
const TORN_RECORD_MS = 60_000;

function slotName(slot: string): string {
  return `${SLOT_PREFIX}${safeName(slot)}`;
}

function safeName(text: string): string {
  return text.replace(/[^\w.-]/g, "_");
}

async function makeDir(dir: string): Promise<string> {
  await Deno.mkdir(dir, { mode: 0o700 });
  return dir;
}

function alreadyExists(err: unknown): false {
  if (err instanceof Deno.errors.AlreadyExists) return false;
  throw err;
}

async function olderThan(dir: string, ms: number): Promise<boolean> {
  try {
    const { mtime } = await Deno.stat(dir);
    return !mtime || Date.now() - mtime.getTime() > ms;
  } catch {
    return false;
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
  for (const path of paths) await removeWorktree(repo, path);
}

function randomHex(): string {
  return [...crypto.getRandomValues(new Uint8Array(4))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}
