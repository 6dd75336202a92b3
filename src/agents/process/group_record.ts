/**
 * A gateway's record of the process groups its children lead, kept on disk while it runs, so
 * that a later start can end the groups of a gateway that was killed before it could.
 *
 * Records live in `$XDG_RUNTIME_DIR/council-gateway/`, else `$XDG_STATE_HOME/council-gateway/`,
 * else `~/.local/state/council-gateway/`: per gateway a `<pid>-<random>.lock` file, locked for as
 * long as the gateway runs (the kernel drops the lock however the process dies), and a
 * `<key>.groups` file listing its live groups with the time each leader was spawned. A starting
 * gateway ends only the groups of records whose lock it can take, and only groups that are still
 * the recorded ones: a pid now used by a process started at another time is left alone.
 */
import { join } from "node:path";
import { groupHasLiveMember, signalGroup } from "./group_end.ts";
import { processAge } from "./process_table.ts";

const DIR_NAME = "council-gateway";

/** Where the records are kept, or undefined when the user has no such directory. */
export function recordDirectory(env: (name: string) => string | undefined): string | undefined {
  const runtime = env("XDG_RUNTIME_DIR");
  if (runtime?.startsWith("/")) return join(runtime, DIR_NAME);
  const state = env("XDG_STATE_HOME");
  if (state?.startsWith("/")) return join(state, DIR_NAME);
  const home = env("HOME");
  return home ? join(home, ".local", "state", DIR_NAME) : undefined;
}

/** pgid → when its leader was spawned (ms since the epoch). */
type RecordedGroups = Map<number, number>;

export function formatRecord(groups: RecordedGroups): string {
  return [...groups].map(([pgid, spawnedAt]) => `group ${pgid} ${spawnedAt}\n`).join("");
}

export function parseRecord(text: string): RecordedGroups {
  const groups: RecordedGroups = new Map();
  for (const line of text.split("\n")) {
    const [kind, ...numbers] = line.trim().split(" ");
    const [pgid, spawnedAt] = numbers.map(Number);
    if (kind === "group" && Number.isSafeInteger(pgid) && pgid > 1 && Number.isFinite(spawnedAt)) {
      groups.set(pgid, spawnedAt);
    }
  }
  return groups;
}

/** How far a process's start (as `ps` gives it, to the second) may be from the recorded spawn. */
const START_TOLERANCE_MS = 3_000;

/** Whether the group is still the recorded one (see the module comment). */
async function stillRecorded(pgid: number, spawnedAt: number): Promise<boolean> {
  const age = await processAge(pgid);
  // The leader gone, the group can hold only its own members: a pid is not given to a new
  // process while a group still bears it.
  if (age === undefined) return true;
  return Math.abs(Date.now() - age * 1000 - spawnedAt) <= START_TOLERANCE_MS;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Ends the recorded groups that are still the recorded ones: SIGTERM, then SIGKILL to those
 * with a member alive after `graceMs`. Returns how many groups were signalled.
 */
async function endRecordedGroups(groups: RecordedGroups, graceMs: number): Promise<number> {
  const ours: number[] = [];
  for (const [pgid, spawnedAt] of groups) {
    if (await stillRecorded(pgid, spawnedAt) && signalGroup(pgid, "SIGTERM")) ours.push(pgid);
  }
  const deadline = Date.now() + graceMs;
  let alive = ours;
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(100);
    const live = await Promise.all(alive.map(groupHasLiveMember));
    alive = alive.filter((_, i) => live[i]);
  }
  for (const pgid of alive) signalGroup(pgid, "SIGKILL");
  return ours.length;
}

/** What `reapLeftovers` did. */
interface Reaped {
  /** Records of gateways that are gone. */
  records: number;
  /** Groups of theirs that were still running and were ended. */
  groups: number;
}

/** Files left from a record whose creation never finished are removed after this long. */
const STALE_TEMP_MS = 60_000;

/** Removes a temporary lock file that no gateway finished creating. */
async function removeIfStale(path: string): Promise<void> {
  const info = await Deno.stat(path).catch(() => undefined);
  if (info?.mtime && Date.now() - info.mtime.getTime() > STALE_TEMP_MS) {
    await Deno.remove(path).catch(() => {});
  }
}

/** Ends what gateways that are gone left running, and removes their records. */
export async function reapLeftovers(dir: string, graceMs: number): Promise<Reaped> {
  const reaped: Reaped = { records: 0, groups: 0 };
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].map((entry) => entry.name);
  } catch {
    return reaped;
  }
  for (const name of names) {
    if (!name.endsWith(".lock")) continue;
    if (name.startsWith(".")) {
      await removeIfStale(join(dir, name));
      continue;
    }
    let lock: Deno.FsFile;
    try {
      lock = await Deno.open(join(dir, name), { read: true, write: true });
    } catch {
      continue;
    }
    try {
      // Taken only when the gateway that holds it is gone.
      if (!await lock.tryLock(true)) continue;
      const groupsPath = join(dir, `${name.slice(0, -".lock".length)}.groups`);
      const text = await Deno.readTextFile(groupsPath).catch(() => "");
      reaped.groups += await endRecordedGroups(parseRecord(text), graceMs);
      reaped.records++;
      await Deno.remove(groupsPath).catch(() => {});
      await Deno.remove(join(dir, name)).catch(() => {});
    } finally {
      lock.close();
    }
  }
  return reaped;
}

/** This gateway's own record: locked while it lives, rewritten whenever its groups change. */
export class GroupRecord {
  readonly #groups: RecordedGroups = new Map();
  #writing?: Promise<void>;
  #dirty = false;
  #closed = false;

  private constructor(
    readonly path: string,
    readonly lockPath: string,
    readonly lock: Deno.FsFile,
    readonly onError: (error: unknown) => void,
  ) {}

  /** Creates and locks this gateway's record in `dir` (made, mode 0700, when missing). */
  static async create(dir: string, onError: (error: unknown) => void): Promise<GroupRecord> {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const key = `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
    // Locked under a temporary name first, so that no reaper ever sees it unlocked.
    const temp = join(dir, `.${key}.lock`);
    const lock = await Deno.open(temp, { write: true, createNew: true, mode: 0o600 });
    try {
      await lock.lock(true);
      const lockPath = join(dir, `${key}.lock`);
      await Deno.rename(temp, lockPath);
      return new GroupRecord(join(dir, `${key}.groups`), lockPath, lock, onError);
    } catch (err) {
      lock.close();
      await Deno.remove(temp).catch(() => {});
      throw err;
    }
  }

  /** Records a group whose leader was just spawned (or at `spawnedAt`). */
  add(pgid: number, spawnedAt = Date.now()): void {
    if (this.#closed) return;
    this.#groups.set(pgid, spawnedAt);
    this.#changed();
  }

  remove(pgid: number): void {
    if (this.#closed || !this.#groups.delete(pgid)) return;
    this.#changed();
  }

  #changed(): void {
    this.#dirty = true;
    this.#writing ??= this.#flush();
  }

  /** Writes until the file matches memory; each version replaces the last one whole. */
  async #flush(): Promise<void> {
    while (this.#dirty && !this.#closed) {
      this.#dirty = false;
      const temp = `${this.path}.tmp`;
      try {
        await Deno.writeTextFile(temp, formatRecord(this.#groups), { mode: 0o600 });
        await Deno.rename(temp, this.path);
      } catch (err) {
        this.onError(err);
      }
    }
    this.#writing = undefined;
  }

  /** Removes the record (its groups are over) and releases the lock. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#writing;
    await Deno.remove(this.path).catch(() => {});
    await Deno.remove(this.lockPath).catch(() => {});
    this.lock.close();
  }
}
