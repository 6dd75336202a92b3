/**
 * The gateway's isolator at start-up: kept under the user's state directory, and first
 * removing what a gateway that did not stop cleanly left there.
 */
import type { Logger } from "@logtape/logtape";
import { Isolator } from "./isolation.ts";
import { defaultWorkspaceRoot, type KeepSlots } from "./registry.ts";

/**
 * `root` undefined: the default under the state directory; null: no isolation at all. A
 * session's worktrees are kept between its turns as `keep` says.
 */
export function startIsolator(
  root: string | null | undefined,
  log: Logger,
  keep: KeepSlots,
): Isolator | undefined {
  const dir = root === undefined ? defaultWorkspaceRoot((name) => Deno.env.get(name)) : root;
  if (!dir) {
    log.warn("no state directory (HOME unset): fanned-out answer turns run children read-only");
    return undefined;
  }
  const isolator = new Isolator({ root: dir, keep });
  isolator.sweep().then(
    (removed) => {
      if (removed.length === 0) return;
      log.info("removed {count} isolated workspaces left by a gateway that stopped: {dirs}", {
        count: removed.length,
        dirs: removed.join(", "),
      });
    },
    (err) => log.warn("cannot clean up {dir}: {error}", { dir, error: String(err) }),
  );
  return isolator;
}
