/**
 * Ends a child's process group and knows when it is over: a group is over once no member is
 * alive, and a member that has exited but that nobody reaped (a zombie) is not alive.
 */

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The state letter and process group in a `/proc/<pid>/stat` text. */
export function parseProcStat(text: string): { state: string; pgid: number } | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ")".
  const close = text.lastIndexOf(")");
  if (close === -1) return undefined;
  const [state, _ppid, pgid] = text.slice(close + 2).split(" ", 3);
  return state && pgid ? { state, pgid: Number(pgid) } : undefined;
}

/** Exited (zombie, Z) or being torn down (X, x): no longer running anything. */
const isExited = (state: string) => state === "Z" || state === "X" || state === "x";

/** Whether `ps -A -o pgid= -o stat=` output lists a member of `pgid` that is not a zombie. */
export function psListsLiveMember(text: string, pgid: number): boolean {
  return text.split("\n").some((line) => {
    const [group, stat] = line.trim().split(/\s+/);
    return Number(group) === pgid && stat !== undefined && !isExited(stat[0]);
  });
}

/** Linux: every process's /proc/<pid>/stat, read in parallel off the main thread. */
async function procHasLiveMember(pgid: number): Promise<boolean> {
  const pids: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    const first = entry.name.charCodeAt(0);
    if (first >= 48 && first <= 57) pids.push(entry.name);
  }
  const stats = await Promise.all(
    pids.map((pid) => Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "")),
  );
  return stats.some((text) => {
    const stat = text ? parseProcStat(text) : undefined;
    return stat !== undefined && stat.pgid === pgid && !isExited(stat.state);
  });
}

/** macOS and the BSDs: one `ps` over all processes (`-A` lists zombies too, as state Z). */
async function psHasLiveMember(pgid: number): Promise<boolean> {
  try {
    const { stdout } = await new Deno.Command("ps", {
      args: ["-A", "-o", "pgid=", "-o", "stat="],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return psListsLiveMember(new TextDecoder().decode(stdout), pgid);
  } catch {
    // No ps to ask: a member is assumed alive, so the grace and SIGKILL still apply.
    return true;
  }
}

/** Whether a process group has a member that has not exited (zombies do not count). */
export function groupHasLiveMember(pgid: number): Promise<boolean> {
  return Deno.build.os === "linux" ? procHasLiveMember(pgid) : psHasLiveMember(pgid);
}

/** The group still has members (zombies included); SIGCONT harms nothing and fails without. */
const groupExists = (pgid: number) => signalGroup(pgid, "SIGCONT");

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** First and longest wait between two looks at a terminated group. */
const FIRST_PROBE_MS = 10;
const LONGEST_PROBE_MS = 100;

export interface GroupEnding {
  /** Real-time wait between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Whether the child's own process has exited (and been reaped). */
  exited(): boolean;
  /** Tests may replace the live-member check. */
  hasLiveMember?: (pgid: number) => Promise<boolean>;
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
  const deadline = Date.now() + ending.graceMs;
  let wait = FIRST_PROBE_MS;
  while (Date.now() < deadline) {
    await sleep(Math.max(1, Math.min(wait, deadline - Date.now())));
    wait = Math.min(wait * 2, LONGEST_PROBE_MS);
    if (!groupExists(pgid) || !await hasLiveMember(pgid)) return;
  }
  signalGroup(pgid, "SIGKILL");
}
