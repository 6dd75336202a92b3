/**
 * The warm pool: CLI children started ahead of their turn, kept per (agent, role, model, cwd), so
 * a turn's child skips most of its CLI's start-up. A key is kept warm from its first run on (a
 * turn's own copy of the workspace never is; a session's kept copy is, once cleaned); bounded,
 * refilled once no pooled run is in flight (so refills do not compete with a turn for the CPU),
 * reaped when idle and on shutdown.
 */
import { type Clock, systemClock, type TimerId } from "../base/clock.ts";
import { type AgentConfig, isHttpRunner } from "../config/mod.ts";
import type { AgentPrompt, AgentRunner, PreparedRun, PrepareOptions, RunOptions } from "./types.ts";
import { cliAdapterOf } from "./cli/runners.ts";

interface WarmPoolSettings {
  /** Children kept ready per (agent, role, model, cwd); 0 turns the pool off. */
  size: number;
  /** A ready child unused this long is ended, and its key is not refilled until used again. */
  idleMs: number;
  /** Most ready children across all keys. */
  maxProcesses: number;
}

export interface WarmPool {
  /** The runner to hand the council: pooled children where there are some, cold runs otherwise. */
  readonly runner: AgentRunner;
  /** Ready children now (all keys). */
  readonly ready: number;
  /** Ends every ready child and stops refilling. */
  shutdown(): Promise<void>;
}

interface Entry {
  key: string;
  prepared: Promise<PreparedRun>;
  timer: TimerId;
  /** The directory the child was started in, as that very directory (see `directoryId`). */
  cwdId?: string;
}

interface Wanted {
  agent: AgentConfig;
  options: PrepareOptions;
  /** Its directory still holds a turn's changes: not refilled until they are cleaned. */
  pending?: boolean;
}

/** What a pooled child is started with (what shapes its argv, cwd and environment). */
type PoolOptions = Pick<RunOptions, "role" | "cwd" | "access" | "model" | "hostCredentials">;

/** What makes two runs' children interchangeable: agent, role, model, cwd, access, credentials. */
export function poolKey(agent: AgentConfig, options: PoolOptions): string {
  return JSON.stringify([
    agent.name,
    options.role,
    options.model ?? agent.model,
    options.cwd ?? "",
    options.access ?? "",
    Object.entries(options.hostCredentials ?? {}).sort(),
  ]);
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * The directory at `path` as that very directory: one removed and made again at the same path (a
 * session's workspace slot reaped, then made afresh) is another, and a child waiting in the
 * removed one has no working directory left. Device and inode suffice while that child lives: its
 * working directory keeps the removed inode in use, so the new directory cannot get its number
 * (a dead child is dropped as dead). The creation time, where the filesystem reports one, also
 * tells apart a directory whose waiting child has since died.
 */
function directoryId(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    const { dev, ino, birthtime } = Deno.statSync(path);
    const born = birthtime?.getTime();
    return born ? `${dev}:${ino}:${born}` : `${dev}:${ino}`;
  } catch {
    return "gone";
  }
}

function discard(entry: Entry): Promise<void> {
  return entry.prepared.then((p) => p.discard(), () => {});
}

/** The ready children, the keys worth keeping warm, and the runs in flight. */
class Pool implements WarmPool {
  readonly #runner: AgentRunner;
  readonly #settings: WarmPoolSettings;
  readonly #clock: Clock;
  readonly #ready = new Map<string, Entry[]>();
  readonly #wanted = new Map<string, Wanted>();
  #total = 0;
  #inFlight = 0;
  #stopped = false;
  readonly runner: AgentRunner;

  constructor(runner: AgentRunner, settings: WarmPoolSettings, clock: Clock) {
    this.#runner = runner;
    this.#settings = settings;
    this.#clock = clock;
    this.runner = Object.assign(
      (agent: AgentConfig, prompt: AgentPrompt, options: RunOptions) =>
        this.#poolable(agent, options)
          ? this.#pooled(agent, prompt, options)
          : runner(agent, prompt, options),
      { prepare: (agent: AgentConfig, options: PrepareOptions) => this.#prepare(agent, options) },
    );
  }

  get ready(): number {
    return this.#total;
  }

  async shutdown(): Promise<void> {
    this.#stopped = true;
    const entries = [...this.#ready.values()].flat();
    for (const entry of entries) this.#remove(entry);
    this.#wanted.clear();
    await Promise.all(entries.map(discard));
  }

  #remove(entry: Entry): boolean {
    const list = this.#ready.get(entry.key) ?? [];
    const at = list.indexOf(entry);
    if (at === -1) return false;
    list.splice(at, 1);
    if (list.length === 0) this.#ready.delete(entry.key);
    this.#total--;
    this.#clock.clearTimeout(entry.timer);
    return true;
  }

  #add(key: string, { agent, options }: Wanted): void {
    const entry: Entry = {
      key,
      cwdId: directoryId(options.cwd),
      prepared: this.#runner.prepare(agent, { ...options, holdStdin: true }),
      timer: this.#clock.setTimeout(() => {
        // Unused for idleMs: end it, and stop refilling this key until it is used again.
        if (this.#remove(entry)) discard(entry);
        if (!this.#ready.has(key)) this.#wanted.delete(key);
      }, this.#settings.idleMs),
    };
    this.#ready.set(key, [...(this.#ready.get(key) ?? []), entry]);
    this.#total++;
  }

  #refill(): void {
    if (this.#stopped) return;
    const { size, maxProcesses } = this.#settings;
    this.#dropStale();
    // The keys used last first: at `maxProcesses` they take the place of keys used longer ago.
    const newestFirst = [...this.#wanted].reverse();
    for (const [i, [key, want]] of newestFirst.entries()) {
      if (want.pending) continue;
      while ((this.#ready.get(key)?.length ?? 0) < size) {
        if (this.#total >= maxProcesses && !this.#evictOlder(newestFirst.slice(i + 1))) return;
        this.#add(key, want);
      }
    }
  }

  /**
   * Ends the children waiting in a directory that is gone or was made again (a kept slot removed:
   * fewer children, another repository, idle, broken), rather than let them count toward
   * `maxProcesses` until `idleMs`; such a directory (a turn's scratch copy, say) gets none.
   */
  #dropStale(): void {
    for (const [key, want] of [...this.#wanted]) {
      const cwd = want.options.cwd;
      if (cwd === undefined) continue;
      const gone = !isDirectory(cwd);
      if (gone) this.#wanted.delete(key);
      const id = directoryId(cwd);
      for (const entry of [...this.#ready.get(key) ?? []]) {
        if ((gone || entry.cwdId !== id) && this.#remove(entry)) void discard(entry);
      }
    }
  }

  /** Ends a waiting child of the key used longest ago among `older`, if one has any. */
  #evictOlder(older: readonly [string, Wanted][]): boolean {
    for (const [key] of [...older].reverse()) {
      const entry = this.#ready.get(key)?.[0];
      if (entry && this.#remove(entry)) {
        void discard(entry);
        return true;
      }
    }
    return false;
  }

  /** A ready child for `key` that is still alive, or undefined. */
  async #take(key: string, cwd: string | undefined): Promise<PreparedRun | undefined> {
    for (;;) {
      const entry = this.#ready.get(key)?.[0];
      if (!entry) return undefined;
      this.#remove(entry);
      const prepared = await entry.prepared;
      const sameDir = entry.cwdId === directoryId(cwd);
      if (sameDir && prepared.alive?.() !== false) return prepared;
      await prepared.discard();
    }
  }

  /** Books a run of `key`: it is kept warm from now on, until it goes unused for `idleMs`. */
  #note(key: string, agent: AgentConfig, options: PoolOptions & Pick<RunOptions, "reusedAfter">) {
    const { role, cwd, access, model, hostCredentials, reusedAfter } = options;
    const want: Wanted = { agent, options: { role, cwd, access, model, hostCredentials } };
    if (reusedAfter) {
      want.pending = true;
      const cleaned = () => {
        want.pending = false;
        if (this.#inFlight === 0) this.#refill();
      };
      void reusedAfter.then(cleaned, cleaned);
    }
    this.#wanted.delete(key);
    this.#wanted.set(key, want);
    // Bounded: the key used longest ago goes first, with its waiting children.
    while (this.#wanted.size > this.#settings.maxProcesses) {
      const oldest = this.#wanted.keys().next().value!;
      this.#wanted.delete(oldest);
      for (const entry of [...this.#ready.get(oldest) ?? []]) {
        if (this.#remove(entry)) void discard(entry);
      }
    }
  }

  /** A run over: refilled once the turn's runs are over (a CLI starting takes CPU a turn needs). */
  #over(): void {
    if (--this.#inFlight === 0) this.#refill();
  }

  async #pooled(agent: AgentConfig, prompt: AgentPrompt, options: RunOptions) {
    const key = poolKey(agent, options);
    this.#note(key, agent, options);
    this.#inFlight++;
    try {
      const prepared = await this.#take(key, options.cwd);
      if (!prepared) return await this.#runner(agent, prompt, options);
      const { signal, onEvent, turnId } = options;
      return await prepared.run(prompt, { signal, onEvent, turnId });
    } finally {
      this.#over();
    }
  }

  #poolable(agent: AgentConfig, options: RunOptions | PrepareOptions): boolean {
    return this.#settings.size > 0 && !this.#stopped && !isHttpRunner(agent.runner) &&
      // A program that may act before it reads its prompt (a `command` agent) starts with it.
      cliAdapterOf(agent.runner)?.waitsForPrompt === true &&
      !("signal" in options && options.signal?.aborted) &&
      // A turn's own copy of the workspace: no later turn comes back to it.
      !("scratch" in options && options.scratch) &&
      // A turn's attachments shape its children (argv, files): those start with their turn.
      !options.attachments?.length;
  }

  /**
   * A child prepared ahead of its prompt (the council's early synthesizer): a ready one from the
   * pool when there is one (in flight until it is run or discarded), else a fresh one.
   */
  async #prepare(agent: AgentConfig, options: PrepareOptions): Promise<PreparedRun> {
    if (!this.#poolable(agent, options)) return await this.#runner.prepare(agent, options);
    const key = poolKey(agent, options);
    this.#note(key, agent, options);
    const taken = await this.#take(key, options.cwd);
    if (!taken) return await this.#runner.prepare(agent, options);
    this.#inFlight++;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      this.#over();
    };
    return {
      agent: taken.agent,
      pid: taken.pid,
      ...(taken.alive ? { alive: () => taken.alive!() } : {}),
      run: (prompt, runOptions) => taken.run(prompt, runOptions).finally(settle),
      discard: () => taken.discard().finally(settle),
    };
  }
}

/** Wraps `runner` with a warm pool (`settings.size` 0: the runner itself, nothing kept). */
export function createWarmPool(
  runner: AgentRunner,
  settings: WarmPoolSettings,
  clock: Clock = systemClock,
): WarmPool {
  return new Pool(runner, settings, clock);
}
