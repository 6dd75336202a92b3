/**
 * Keeps CLI children from outliving the gateway: each child's process group is told to a
 * watchdog process (watchdog.ts) and written to the gateway's record (group_record.ts), and
 * at start the groups that killed gateways left behind are ended.
 */
import type { Logger } from "@logtape/logtape";
import { type GroupSpawn, machineGroupSpawn } from "./group_spawn.ts";
import type { GroupRegistry } from "./process.ts";
import { GroupRecord, reapLeftovers } from "./group_record.ts";
import { Watchdog } from "./watchdog.ts";

export interface GroupKeeper extends GroupRegistry {
  /** Settles once the leftovers of earlier gateways are ended and the record is open. */
  readonly ready: Promise<void>;
  /** One line on what ends the groups if the gateway dies, for the log. */
  describe(): string;
  /** Stops the watchdog and removes the record (call once every child is over). */
  close(): Promise<void>;
}

export interface GroupKeeperOptions {
  /** Where records are kept (see `recordDirectory`); none: no record, the watchdog only. */
  dir?: string;
  /** Between SIGTERM and SIGKILL of groups left behind. */
  graceMs: number;
  log: Logger;
  groupSpawn?: GroupSpawn;
}

/** A watchdog that dies sooner than this after its start is not started again. */
const MIN_WATCHDOG_LIFE_MS = 1_000;

/** Starts the watchdog and, in the background, the reaping of leftovers and the record. */
export function startGroupKeeper(options: GroupKeeperOptions): GroupKeeper {
  const { log } = options;
  /** Live groups and when each leader was spawned. */
  const live = new Map<number, number>();
  let record: GroupRecord | undefined;
  let watchdog: Watchdog | undefined;
  let watchdogStarted = 0;

  const startWatchdog = (): Watchdog | undefined => {
    try {
      watchdogStarted = Date.now();
      watchdog = Watchdog.start({
        groupSpawn: options.groupSpawn ?? machineGroupSpawn(),
        graceMs: options.graceMs,
        onExit: (status) => {
          const was = watchdog?.pid;
          watchdog = undefined;
          // One that dies at once would die again: started again only after a run of its own.
          const next = Date.now() - watchdogStarted >= MIN_WATCHDOG_LIFE_MS
            ? startWatchdog()
            : undefined;
          log.warn("watchdog {was} exited ({how}); {now}", {
            was,
            how: status.signal ?? `code ${status.code}`,
            now: next
              ? `watchdog ${next.pid} replaces it`
              : "children may outlive a killed gateway",
          });
        },
      }, live.keys());
      return watchdog;
    } catch (err) {
      log.warn("no watchdog ({error}): children may outlive a killed gateway", {
        error: String(err),
      });
      return undefined;
    }
  };
  startWatchdog();

  const ready = (async () => {
    if (!options.dir) return;
    const dir = options.dir;
    try {
      record = await GroupRecord.create(
        dir,
        (err) =>
          log.warn("cannot write the record of process groups in {dir}: {error}", {
            dir,
            error: String(err),
          }),
      );
      for (const [pgid, spawnedAt] of live) record.add(pgid, spawnedAt);
    } catch (err) {
      log.warn("no record of process groups in {dir}: {error}", { dir, error: String(err) });
    }
    try {
      const reaped = await reapLeftovers(dir, options.graceMs);
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
  })();

  return {
    ready,
    describe: () =>
      watchdog
        ? `watchdog ${watchdog.pid} ends them if this gateway dies`
        : "no watchdog: children may outlive a killed gateway",
    add(pgid) {
      live.set(pgid, Date.now());
      watchdog?.add(pgid);
      record?.add(pgid);
    },
    remove(pgid) {
      live.delete(pgid);
      watchdog?.remove(pgid);
      record?.remove(pgid);
    },
    async close() {
      await ready;
      await watchdog?.close();
      await record?.close();
    },
  };
}
