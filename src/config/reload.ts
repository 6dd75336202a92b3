/**
 * Hot reload: the configuration is read again when its file changes or on request (SIGHUP); a
 * valid one is handed over with what changed, an invalid one is refused with its exact error and
 * the running configuration stays.
 */
import { basename, dirname, resolve } from "node:path";
import type { Logger } from "@logtape/logtape";
import { bindPolicyProblem } from "./bind_policy.ts";
import { type Clock, systemClock, type TimerId } from "../base/clock.ts";
import type { Config } from "./mod.ts";
import { type ConfigChange, configChanges, RESTART_KEYS } from "./differences.ts";

/** Editors write a file in several steps; this long after the last event the file is read. */
const RELOAD_SETTLE_MS = 200;

interface ConfigReloaderOptions {
  /** Loads the configuration as at start (same file lookup, env and flags); throws on error. */
  load: () => Readonly<Config>;
  current: Readonly<Config>;
  /** Takes a valid new configuration (the server serves it from the next request). */
  apply: (next: Readonly<Config>, changes: ConfigChange[]) => void;
  log: Logger;
  clock?: Clock;
  settleMs?: number;
}

export class ConfigReloader {
  #options: ConfigReloaderOptions;
  #current: Readonly<Config>;
  #clock: Clock;
  #watcher: Deno.FsWatcher | undefined;
  #pending: TimerId | undefined;

  constructor(options: ConfigReloaderOptions) {
    this.#options = options;
    this.#current = options.current;
    this.#clock = options.clock ?? systemClock;
  }

  get current(): Readonly<Config> {
    return this.#current;
  }

  /**
   * Watches the configuration file in use (its directory, so a file an editor replaces is seen
   * too). Without a file there is nothing to watch; a reload request still reads the lookup.
   */
  watch(): void {
    const path = this.#current.configPath;
    if (!path || this.#watcher) return;
    const file = resolve(path);
    try {
      this.#watcher = Deno.watchFs(dirname(file), { recursive: false });
    } catch (error) {
      this.#options.log.warn("config: cannot watch {path} for changes: {error}", {
        path: file,
        error: (error as Error).message,
      });
      return;
    }
    const watcher = this.#watcher;
    (async () => {
      for await (const event of watcher) {
        if (event.paths.some((p) => basename(p) === basename(file))) this.#schedule();
      }
    })().catch(() => {});
  }

  stop(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#pending !== undefined) this.#clock.clearTimeout(this.#pending);
    this.#pending = undefined;
  }

  #schedule(): void {
    if (this.#pending !== undefined) this.#clock.clearTimeout(this.#pending);
    this.#pending = this.#clock.setTimeout(() => {
      this.#pending = undefined;
      this.reload("file change");
    }, this.#options.settleMs ?? RELOAD_SETTLE_MS);
  }

  /** Reads the configuration now; returns whether a new one was applied. */
  reload(reason: string): boolean {
    const { log } = this.#options;
    let next: Readonly<Config>;
    try {
      next = this.#options.load();
      const problem = bindPolicyProblem(next);
      if (problem) throw new Error(problem);
    } catch (error) {
      log.error(
        "config reload ({reason}) of {path} failed, the running configuration stays: {error}",
        { reason, path: this.#current.configPath ?? "defaults", error: (error as Error).message },
      );
      return false;
    }
    const changes = configChanges(this.#current, next);
    const from = next.configPath ?? "defaults";
    if (changes.length === 0) {
      log.info("config reload ({reason}): {from} is unchanged", { reason, from });
      return false;
    }
    // The listener and the ledger stay as they are: those keys keep their running values.
    const running = this.#current as unknown as Record<string, unknown>;
    const kept = Object.fromEntries([...RESTART_KEYS].map((key) => [key, running[key]]));
    const effective = Object.freeze({ ...next, ...kept }) as Readonly<Config>;
    this.#current = effective;
    this.#options.apply(effective, changes);
    const applied = changes.filter((c) => !c.restart);
    if (applied.length) {
      log.info("config reloaded from {from} ({reason}), from the next turn: {changes}", {
        from,
        reason,
        changes: applied.map((c) => `${c.key} ${c.text}`).join("; "),
      });
    }
    for (const change of changes.filter((c) => c.restart)) {
      log.warn("config: {key} {change} applies after a restart", {
        key: change.key,
        change: change.text,
      });
    }
    return true;
  }
}
