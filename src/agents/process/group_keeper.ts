/**
 * Keeps CLI children from outliving the gateway: each child's process group is told to a
 * watchdog process (watchdog.ts) and written to the gateway's record (group_record.ts), and
 * at start the groups that killed gateways left behind are ended.
 */
import type { Logger } from "@logtape/logtape";
import { type GroupSpawn, machineGroupSpawn } from "./group_spawn.ts";
import type { GroupRegistry } from "./child_process.ts";
import { GroupRecord, reapLeftovers } from "./group_record.ts";
import { Watchdog } from "./watchdog.ts";

interface GroupKeeperOptions {
  /** Where records are kept (see `recordDirectory`); none: no record, the watchdog only. */
  dir?: string;
  /** Between SIGTERM and SIGKILL of groups left behind. */
  graceMs: number;
  log: Logger;
  groupSpawn?: GroupSpawn;
}

/** A watchdog that dies sooner than this after its start is not started again. */
const MIN_WATCHDOG_LIFE_MS = 1_000;

export class GroupKeeper implements GroupRegistry {
  /** Live groups and when each leader was spawned. */
  readonly #live = new Map<number, number>();
  #record?: GroupRecord;
  #watchdog?: Watchdog;
  #watchdogStarted = 0;
  /** Settles once the leftovers of earlier gateways are ended and the record is open. */
  readonly ready: Promise<void>;

  /** Starts the watchdog and, in the background, the record and the reaping of leftovers. */
  constructor(readonly options: GroupKeeperOptions) {
    this.#startWatchdog();
    this.ready = options.dir ? this.#openRecord(options.dir) : Promise.resolve();
  }

  /** One line on what ends the groups if the gateway dies, for the log. */
  describe(): string {
    return this.#watchdog
      ? `watchdog ${this.#watchdog.pid} ends them if this gateway dies`
      : "no watchdog: children may outlive a killed gateway";
  }

  add(pgid: number): void {
    this.#live.set(pgid, Date.now());
    this.#watchdog?.add(pgid);
    this.#record?.add(pgid);
  }

  remove(pgid: number): void {
    this.#live.delete(pgid);
    this.#watchdog?.remove(pgid);
    this.#record?.remove(pgid);
  }

  /** Stops the watchdog and removes the record (call once every child is over). */
  async close(): Promise<void> {
    await this.ready;
    const watchdog = this.#watchdog;
    this.#watchdog = undefined;
    await watchdog?.close();
    await this.#record?.close();
  }

  #startWatchdog(): Watchdog | undefined {
    const { log } = this.options;
    try {
      this.#watchdogStarted = Date.now();
      this.#watchdog = Watchdog.start({
        groupSpawn: this.options.groupSpawn ?? machineGroupSpawn(),
        graceMs: this.options.graceMs,
        onExit: (status) => {
          const was = this.#watchdog?.pid;
          this.#watchdog = undefined;
          // One that dies at once would die again: started again only after a run of its own.
          const next = Date.now() - this.#watchdogStarted >= MIN_WATCHDOG_LIFE_MS
            ? this.#startWatchdog()
            : undefined;
          log.warn("watchdog {was} exited ({how}); {now}", {
            was,
            how: status.signal ?? `code ${status.code}`,
            now: next
              ? `watchdog ${next.pid} replaces it`
              : "children may outlive a killed gateway",
          });
        },
      }, this.#live.keys());
      return this.#watchdog;
    } catch (err) {
      log.warn("no watchdog ({error}): children may outlive a killed gateway", {
        error: String(err),
      });
      return undefined;
    }
  }

  async #openRecord(dir: string): Promise<void> {
    const { log, graceMs } = this.options;
    try {
      const record = await GroupRecord.create(
        dir,
        (err) =>
          log.warn("cannot write the record of process groups in {dir}: {error}", {
            dir,
            error: String(err),
          }),
      );
      for (const [pgid, spawnedAt] of this.#live) record.add(pgid, spawnedAt);
      this.#record = record;
    } catch (err) {
      log.warn("no record of process groups in {dir}: {error}", { dir, error: String(err) });
    }
    try {
      const reaped = await reapLeftovers(dir, graceMs);
      if (reaped.groups > 0) {
        log.info("ended {groups} process group(s) left running by {records} earlier gateway(s)", {
          ...reaped,
        });
      }
    } catch (err) {
      log.warn("cannot end what earlier gateways left in {dir}: {error}", {
        dir,
        error: String(err),
      });
    }
  }
}
