/**
 * Ends a child's process group and knows when it is over: a group is over once no member is
 * alive, and a member that has exited but that nobody reaped (a zombie) is not alive.
 */
import { listProcesses } from "./process_table.ts";

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Exited (zombie, Z) or being torn down (X, x): no longer running anything. */
const isExited = (state: string) => state === "Z" || state === "X" || state === "x";

/** Whether a process group has a member that has not exited (zombies do not count). */
export async function groupHasLiveMember(pgid: number): Promise<boolean> {
  const table = await listProcesses();
  // No table to read: a member is assumed alive, so the grace and SIGKILL still apply.
  if (!table) return true;
  return table.some((entry) => entry.pgid === pgid && !isExited(entry.state));
}

/** The group still has members (zombies included); SIGCONT harms nothing and fails without. */
const groupExists = (pgid: number) => signalGroup(pgid, "SIGCONT");

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits `ms`, or less when `event` settles first: true when it did. */
async function sleepUntil(ms: number, event: Promise<void>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([event.then(() => true), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

/** First and longest wait between two looks at a terminated group. */
const FIRST_PROBE_MS = 20;
const LONGEST_PROBE_MS = 200;

interface GroupEnding {
  /** Real-time wait between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Whether the child's own process has exited (and been reaped). */
  exited(): boolean;
  /** Tests may replace the live-member check. */
  hasLiveMember?: (pgid: number) => Promise<boolean>;
  /** Tests may lengthen the first wait between two looks at the group. */
  firstProbeMs?: number;
}

/**
 * Ends the group a child leads: nothing when no member is alive, else SIGTERM, then SIGKILL once
 * `graceMs` has passed with a member still alive. Resolves when the group is over or killed.
 */
export async function endGroup(child: Deno.ChildProcess, ending: GroupEnding): Promise<void> {
  const pgid = child.pid;
  const hasLiveMember = ending.hasLiveMember ?? groupHasLiveMember;
  if (!groupExists(pgid)) {
    // No group: gone, a platform without process groups, or setsid(1) not yet past setsid(2)
    // (the first moments after spawn). End the child itself, then the group it may have formed
    // meanwhile (its pid cannot be reused before we reap it).
    if (!ending.exited()) {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      signalGroup(pgid, "SIGKILL");
    }
    return;
  }
  // After a normal exit, a group of zombies only (Claude Code leaves a defunct sh, and PID 1 may
  // be slow to reap it or never do) is over: nothing to signal, nothing to wait for.
  if (ending.exited() && !await hasLiveMember(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  // The leader's exit also ends a wait: a group is most often the leader alone, and then it is
  // over at once, not at the next probe.
  let leaderWaited = ending.exited();
  const leaderExit = child.status.then(() => {});
  const deadline = Date.now() + ending.graceMs;
  let wait = ending.firstProbeMs ?? FIRST_PROBE_MS;
  while (Date.now() < deadline) {
    const ms = Math.max(1, Math.min(wait, deadline - Date.now()));
    if (leaderWaited) await sleep(ms);
    else leaderWaited = await sleepUntil(ms, leaderExit);
    wait = Math.min(wait * 2, LONGEST_PROBE_MS);
    if (!groupExists(pgid) || !await hasLiveMember(pgid)) return;
  }
  signalGroup(pgid, "SIGKILL");
}
