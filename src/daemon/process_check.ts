/** Whether a process (not necessarily our child) is alive, and waiting for it to end. */

/** The state letter Linux shows for a pid (`Z` for a zombie), or null without /proc. */
function procState(pid: number): string | null | "gone" {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // "pid (comm) S …": the state follows the last ')' (comm may hold spaces and parens).
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      try {
        Deno.statSync("/proc/self");
        return "gone";
      } catch {
        return null;
      }
    }
    return null;
  }
}

/** True while `pid` runs (a zombie has ended). */
export function isRunning(pid: number): boolean {
  const state = procState(pid);
  if (state === "gone") return false;
  if (state !== null) return state !== "Z";
  // No /proc (macOS): `kill -0` asks without sending anything.
  try {
    return new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** The command line of `pid` when the system shows it (Linux), else null. */
export function commandLine(pid: number): string[] | null {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

/** Waits until `pid` has ended or `ms` passed; true when it ended. */
export async function waitForExit(pid: number, ms: number, everyMs = 50): Promise<boolean> {
  const until = Date.now() + ms;
  while (isRunning(pid)) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return true;
}
