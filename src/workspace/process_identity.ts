/**
 * A process's identity beyond its pid: its start time, so an owner recorded on disk is
 * recognised only while that very process runs, not a zombie it left or a later process that
 * reuses its pid.
 */
import process from "node:process";

/** What `ps` tells of a pid. */
export type ProcessProbe =
  | { state: "running"; started: string }
  | { state: "gone" }
  | { state: "zombie" }
  /** `ps` could not tell (not installed, or without these columns). */
  | { state: "unknown" };

/**
 * Asks `ps` (Linux and macOS alike) for the process's state and start time. `ps` rather than
 * `/proc`: Deno reads `/proc/<pid>/…` only with every permission, and the gateway has fewer.
 */
export function probeProcess(pid: number): ProcessProbe {
  try {
    const out = new Deno.Command("ps", {
      args: ["-o", "stat=,lstart=", "-p", String(pid)],
      // `lstart` is printed in the caller's time zone and locale: fixed, so that two gateways
      // started with different TZ see the same identity.
      env: { TZ: "UTC", LC_ALL: "C" },
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const line = new TextDecoder().decode(out.stdout).trim();
    // `ps -p` exits 1 with no line when the pid names no process.
    return line ? parsePsLine(line) : out.code === 1 ? { state: "gone" } : { state: "unknown" };
  } catch {
    return { state: "unknown" };
  }
}

/** `Ss   Sat Nov 28 04:08:10 2026` → running since that time; a `Z` state is a zombie. */
export function parsePsLine(line: string): ProcessProbe {
  const match = /^(\S+)\s+(.+)$/.exec(line.trim());
  if (!match) return { state: "unknown" };
  if (match[1].startsWith("Z")) return { state: "zombie" };
  return { state: "running", started: match[2].replace(/\s+/g, " ") };
}

/** The running process `pid`'s identity; undefined when it is gone, a zombie, or unknown. */
export function processIdentity(pid: number): string | undefined {
  const probe = probeProcess(pid);
  return probe.state === "running" ? probe.started : undefined;
}

/**
 * Whether `pid` still runs as the process whose identity was recorded (any, when none was).
 * When `ps` cannot tell, a process that exists counts as alive: keeping a dead gateway's
 * workspaces until the next start is better than removing a live one's.
 */
export function ownerAlive(
  pid: number,
  identity?: string,
  probe: (pid: number) => ProcessProbe = probeProcess,
): boolean {
  const found = probe(pid);
  switch (found.state) {
    case "running":
      return identity === undefined || found.started === identity;
    case "unknown":
      return pidExists(pid);
    default:
      return false;
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}
