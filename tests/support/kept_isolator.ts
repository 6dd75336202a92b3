/** An Isolator keeping session slots, and one turn's isolation made with it, for workspace tests. */
import assert from "node:assert/strict";
import { Isolator } from "../../src/workspace/isolation.ts";
import { FakeClock } from "./fake_clock.ts";

/** How long a test's kept slot lasts without a turn. */
export const IDLE_MS = 60_000;

/** An isolator keeping session slots under `root` for `IDLE_MS` on `clock`, as process `pid`. */
export function keeping(
  root: string,
  clock = new FakeClock(),
  pid = 4242,
  isAlive: (pid: number) => boolean = () => false,
): Isolator {
  return new Isolator({ root, pid, isAlive, keep: { idleMs: IDLE_MS, clock } });
}

/** `count` isolated copies of `cwd` for a new turn (of the session `slot`, if given). */
export async function isolate(isolator: Isolator, cwd: string, count: number, slot?: string) {
  const made = await isolator.isolate(cwd, count, { turnId: `t-${crypto.randomUUID()}`, slot });
  assert.ok(made.ok, made.ok ? "" : made.reason);
  return made.workspace;
}
