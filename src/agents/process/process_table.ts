/**
 * Reads the system's process table through `ps` (on Linux without ps, through `cat` over
 * /proc): Deno lets a program read /proc itself only with --allow-all, which the gateway does
 * not ask for.
 */

/** One process as the table shows it: its process group and state letter (Z: zombie). */
interface ProcessEntry {
  pgid: number;
  state: string;
}

/** Lines of `ps -A -o pgid= -o stat=`. */
export function parsePsTable(text: string): ProcessEntry[] {
  return text.split("\n").flatMap((line) => {
    const [pgid, stat] = line.trim().split(/\s+/);
    return pgid && stat ? [{ pgid: Number(pgid), state: stat[0] }] : [];
  });
}

/** The state letter and process group in one `/proc/<pid>/stat` line. */
export function parseProcStat(line: string): ProcessEntry | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ")".
  const close = line.lastIndexOf(")");
  if (close === -1) return undefined;
  const [state, _ppid, pgid] = line.slice(close + 2).split(" ", 3);
  return state && pgid ? { state, pgid: Number(pgid) } : undefined;
}

/** `ps -o etime=` ("[[dd-]hh:]mm:ss") in seconds. */
export function parseElapsed(text: string): number | undefined {
  const match = /^(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)$/.exec(text.trim());
  if (!match) return undefined;
  const [days, hours, minutes, secs] = match.slice(1).map((part) => Number(part ?? 0));
  return ((days * 24 + hours) * 60 + minutes) * 60 + secs;
}

/** Where the /proc fallback finds `cat`, whatever the gateway's PATH. */
const SYSTEM_PATH = "/usr/bin:/bin";

/** Runs a command for its stdout; undefined when it cannot be run at all. */
async function outputOf(
  command: string,
  args: string[],
  env?: Record<string, string>,
): Promise<{ ok: boolean; text: string } | undefined> {
  try {
    const { success, stdout } = await new Deno.Command(command, {
      args,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return { ok: success, text: new TextDecoder().decode(stdout) };
  } catch {
    return undefined;
  }
}

const onLinux = Deno.build.os === "linux";

/** Every process's group and state; undefined when the table cannot be read. */
export async function listProcesses(): Promise<ProcessEntry[] | undefined> {
  const ps = await outputOf("ps", ["-A", "-o", "pgid=", "-o", "stat="]);
  if (ps?.ok) return parsePsTable(ps.text);
  if (!onLinux) return undefined;
  // A process that ends while cat runs is only missing from the list.
  const proc = await outputOf("/bin/sh", ["-c", "cat /proc/[0-9]*/stat 2>/dev/null"], {
    PATH: SYSTEM_PATH,
  });
  if (!proc?.text) return undefined;
  return proc.text.split("\n").flatMap((line) => parseProcStat(line) ?? []);
}

/** Seconds since a process started; undefined when it does not run (or cannot be asked). */
export async function processAge(pid: number): Promise<number | undefined> {
  const ps = await outputOf("ps", ["-o", "etime=", "-p", String(pid)]);
  if (ps) return ps.ok ? parseElapsed(ps.text) : undefined;
  if (!onLinux) return undefined;
  const script = 'cat /proc/uptime "/proc/$1/stat"';
  const proc = await outputOf("/bin/sh", ["-c", script, "sh", `${pid}`], { PATH: SYSTEM_PATH });
  const [uptime, stat] = proc?.text.split("\n") ?? [];
  const close = stat?.lastIndexOf(")") ?? -1;
  if (close === -1) return undefined;
  // Field 22, the start in clock ticks since boot, at 100 ticks a second (USER_HZ).
  const startTicks = Number(stat.slice(close + 2).split(" ")[19]);
  return Math.max(0, Number(uptime.split(" ")[0]) - startTicks / 100);
}
