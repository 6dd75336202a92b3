/**
 * The warm pool: CLI children started ahead of their turn, kept per (agent, role, model, cwd), so
 * a turn's child skips most of its CLI's start-up. A key is kept warm from its second run on;
 * bounded, refilled once no pooled run is in flight (so refills do not compete with a turn for
 * the CPU), reaped when idle and on shutdown.
 */
import { type Clock, systemClock, type TimerId } from "../clock.ts";
import { type AgentConfig, isHttpRunner } from "../config.ts";
import type { AgentPrompt, AgentRunner, PreparedRun, PrepareOptions, RunOptions } from "./types.ts";

export interface WarmPoolSettings {
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
}

interface Wanted {
  agent: AgentConfig;
  options: PrepareOptions;
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

const SEEN_ONCE_LIMIT = 256;

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function discard(entry: Entry): Promise<void> {
  return entry.prepared.then((p) => p.discard(), () => {});
}

/** Wraps `runner` with a warm pool (`settings.size` 0: the runner itself, nothing kept). */
export function createWarmPool(
  runner: AgentRunner,
  settings: WarmPoolSettings,
  clock: Clock = systemClock,
): WarmPool {
  const ready = new Map<string, Entry[]>();
  const wanted = new Map<string, Wanted>();
  /** Keys run once so far (bounded): a key is refilled from its second run on. */
  const seenOnce = new Set<string>();
  let total = 0;
  let inFlight = 0;
  let stopped = false;

  const remove = (entry: Entry): boolean => {
    const list = ready.get(entry.key) ?? [];
    const at = list.indexOf(entry);
    if (at === -1) return false;
    list.splice(at, 1);
    if (list.length === 0) ready.delete(entry.key);
    total--;
    clock.clearTimeout(entry.timer);
    return true;
  };

  const add = (key: string, { agent, options }: Wanted) => {
    const entry: Entry = {
      key,
      prepared: runner.prepare(agent, { ...options, holdStdin: true }),
      timer: clock.setTimeout(() => {
        // Unused for idleMs: end it, and stop refilling this key until it is used again.
        if (remove(entry)) discard(entry);
        if (!ready.has(key)) wanted.delete(key);
      }, settings.idleMs),
    };
    ready.set(key, [...(ready.get(key) ?? []), entry]);
    total++;
  };

  const refill = () => {
    if (stopped) return;
    for (const [key, want] of wanted) {
      // A directory that is gone (a turn's scratch copy, say) gets no child to wait in it.
      if (want.options.cwd && !isDirectory(want.options.cwd)) {
        wanted.delete(key);
        continue;
      }
      while ((ready.get(key)?.length ?? 0) < settings.size && total < settings.maxProcesses) {
        add(key, want);
      }
    }
  };

  /** A ready child for `key` that is still alive, or undefined. */
  const take = async (key: string): Promise<PreparedRun | undefined> => {
    for (;;) {
      const entry = ready.get(key)?.[0];
      if (!entry) return undefined;
      remove(entry);
      const prepared = await entry.prepared;
      if (prepared.alive?.() !== false) return prepared;
      await prepared.discard();
    }
  };

  /**
   * Books a run of `key`. A directory used once (a turn's own copy of the workspace) would only
   * leave a child waiting where no turn comes back: a key is kept warm once it has come back.
   */
  const note = (key: string, agent: AgentConfig, options: PoolOptions) => {
    const { role, cwd, access, model, hostCredentials } = options;
    if (wanted.has(key) || seenOnce.has(key)) {
      seenOnce.delete(key);
      wanted.set(key, { agent, options: { role, cwd, access, model, hostCredentials } });
    } else {
      seenOnce.add(key);
      if (seenOnce.size > SEEN_ONCE_LIMIT) seenOnce.delete(seenOnce.values().next().value!);
    }
  };

  /** A run over: refilled once the turn's runs are over (a CLI starting takes CPU a turn needs). */
  const over = () => {
    if (--inFlight === 0) refill();
  };

  const pooled = async (agent: AgentConfig, prompt: AgentPrompt, options: RunOptions) => {
    const key = poolKey(agent, options);
    note(key, agent, options);
    inFlight++;
    try {
      const prepared = await take(key);
      if (!prepared) return await runner(agent, prompt, options);
      const { signal, onEvent, turnId } = options;
      return await prepared.run(prompt, { signal, onEvent, turnId });
    } finally {
      over();
    }
  };

  const poolable = (agent: AgentConfig, options: RunOptions | PrepareOptions) =>
    settings.size > 0 && !stopped && !isHttpRunner(agent.runner) &&
    !("signal" in options && options.signal?.aborted) &&
    // A turn's attachments shape its children (argv, files): those start with their turn.
    !options.attachments?.length;

  /**
   * A child prepared ahead of its prompt (the council's early synthesizer): a ready one from the
   * pool when there is one (in flight until it is run or discarded), else a fresh one.
   */
  const prepare = async (agent: AgentConfig, options: PrepareOptions): Promise<PreparedRun> => {
    if (!poolable(agent, options)) return await runner.prepare(agent, options);
    const key = poolKey(agent, options);
    note(key, agent, options);
    const taken = await take(key);
    if (!taken) return await runner.prepare(agent, options);
    inFlight++;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      over();
    };
    return {
      agent: taken.agent,
      pid: taken.pid,
      ...(taken.alive ? { alive: () => taken.alive!() } : {}),
      run: (prompt, runOptions) => taken.run(prompt, runOptions).finally(settle),
      discard: () => taken.discard().finally(settle),
    };
  };

  const run = Object.assign(
    (agent: AgentConfig, prompt: AgentPrompt, options: RunOptions) =>
      poolable(agent, options) ? pooled(agent, prompt, options) : runner(agent, prompt, options),
    { prepare },
  );

  return {
    runner: run,
    get ready() {
      return total;
    },
    async shutdown() {
      stopped = true;
      const entries = [...ready.values()].flat();
      for (const entry of entries) remove(entry);
      wanted.clear();
      await Promise.all(entries.map(discard));
    },
  };
}
