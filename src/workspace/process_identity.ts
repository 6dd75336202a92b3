/**
 * A process's identity beyond its pid: its start time (with the boot it belongs to), so an owner
 * recorded on disk is recognised only while that very process runs, not a zombie it left or a
 * later process that reuses its pid.
 */

/** The running process `pid`'s identity; undefined when it is gone or a zombie. */
export function processIdentity(pid: number): string | undefined {
  return Deno.build.os === "linux" ? linuxIdentity(pid) : psIdentity(pid);
}

/** Whether `pid` still runs as the process whose identity was recorded (any, when none was). */
export function ownerAlive(pid: number, identity?: string): boolean {
  const now = processIdentity(pid);
  return now !== undefined && (identity === undefined || now === identity);
}

function linuxIdentity(pid: number): string | undefined {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  return identityFromStat(stat, bootId());
}

/** From `/proc/<pid>/stat`: undefined for a zombie or dead process, else boot and start tick. */
export function identityFromStat(stat: string, boot: string): string | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [state, startTicks] = [fields[0], fields[19]];
  if (!state || state === "Z" || state === "X" || !startTicks) return undefined;
  return `${boot}:${startTicks}`;
}

let boot: string | undefined;
function bootId(): string {
  try {
    return boot ??= Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();
  } catch {
    return boot = "";
  }
}

/** Elsewhere (macOS, BSD): `ps` gives the state and start time. */
function psIdentity(pid: number): string | undefined {
  try {
    const out = new Deno.Command("ps", {
      args: ["-o", "stat=,lstart=", "-p", String(pid)],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const line = new TextDecoder().decode(out.stdout).trim();
    if (!out.success || !line || line.startsWith("Z")) return undefined;
    return line.replace(/^\S+\s+/, "");
  } catch {
    return undefined;
  }
}
