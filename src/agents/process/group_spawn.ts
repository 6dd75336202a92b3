/**
 * How a child gets its own process group (pgid = pid), so its whole tree can be signalled:
 * `setsid(1)` in front of it where the machine has one, Deno's `detached: true` otherwise.
 */
import { join } from "node:path";
import { findExecutable, isExecutableFile } from "../../base/executables.ts";

/**
 * `setsid`: spawn `setsid <executable> <args…>`; setsid(1) is not a group leader there, so it
 * calls setsid(2) and execs the executable in place (same pid). `detached`: Deno's own
 * `detached: true`, whose pre-exec hook forks the whole gateway for each child: used where there
 * is no setsid(1) (macOS, Windows).
 */
export type GroupSpawn = { via: "setsid"; setsid: string } | { via: "detached" };

/** Where setsid(1) is looked for when PATH does not have it (or cannot be read). */
const SETSID_PLACES = ["/usr/bin/setsid", "/bin/setsid"];

/** The group spawn for a machine: `setsid` on Linux when present, else `detached`. */
export function chooseGroupSpawn(
  { os = Deno.build.os, path = readEnv("PATH"), places = SETSID_PLACES }: {
    os?: typeof Deno.build.os;
    /** The gateway's PATH. */
    path?: string;
    /** Where to look when PATH has no setsid. */
    places?: readonly string[];
  } = {},
): GroupSpawn {
  if (os !== "linux") return { via: "detached" };
  const dirs = (path ?? "").split(":").filter((dir) => dir.startsWith("/"));
  const setsid = [...dirs.map((dir) => join(dir, "setsid")), ...places].find(isExecutableFile);
  return setsid ? { via: "setsid", setsid } : { via: "detached" };
}

let machineChoice: GroupSpawn | undefined;

/** This machine's group spawn, decided once per process. */
export function machineGroupSpawn(): GroupSpawn {
  return machineChoice ??= chooseGroupSpawn();
}

/** One line on how children get their process group, for logs and `doctor`. */
export function describeGroupSpawn(spawn: GroupSpawn): string {
  return spawn.via === "setsid" ? `setsid(1) at ${spawn.setsid}` : "Deno's detached spawn";
}

/** What a child is: its command as configured, where it runs, its whole environment. */
export interface ChildCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** What to hand Deno.Command: setsid(1) in front of the resolved executable, or detached. */
interface SpawnPlan {
  program: string;
  args: string[];
  detached: boolean;
  /** The executable behind setsid(1), whose exec failure setsid reports. */
  wrapped?: string;
}

/** The spawn plan for a child (`detached` too when the executable cannot be found: Deno's error). */
export function spawnPlan(child: ChildCommand, groupSpawn: GroupSpawn): SpawnPlan {
  if (groupSpawn.via === "setsid") {
    // Resolved as Deno would (relative to the child's cwd, on the child's PATH), so that setsid
    // runs exactly what a direct spawn would have run.
    const executable = findExecutable(child.command, {
      cwd: child.cwd,
      path: child.env.PATH ?? readEnv("PATH"),
    });
    if (executable) {
      return {
        program: groupSpawn.setsid,
        args: [executable, ...child.args],
        detached: false,
        wrapped: executable,
      };
    }
  }
  return { program: child.command, args: child.args, detached: true };
}

/**
 * setsid(1)'s own failure to exec the executable (exit 126/127 with its message as the only
 * stderr line), as the spawn error Deno would have given; undefined for any other exit.
 */
export function setsidExecError(
  child: ChildCommand,
  wrapped: string,
  exitCode: number,
  stderr: readonly string[],
): string | undefined {
  if (stderr.length !== 1 || (exitCode !== 126 && exitCode !== 127)) return undefined;
  const prefix = `setsid: failed to execute ${wrapped}: `;
  if (!stderr[0].startsWith(prefix)) return undefined;
  // The file exists and is executable (checked before spawning): a missing file is its #! line's.
  if (exitCode === 127) return `cannot start ${child.command}: its interpreter was not found`;
  return `cannot execute ${child.command}: ${stderr[0].slice(prefix.length).toLowerCase()}`;
}

/** Why Deno could not spawn a child, in one line. */
export function describeSpawnError(err: unknown, child: ChildCommand): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof Deno.errors.NotFound) {
    if (!isDirectory(child.cwd)) return `working directory not found: ${child.cwd}`;
    if (child.command.includes("/") && exists(child.command)) {
      return `cannot start ${child.command}: its interpreter was not found`;
    }
    return `executable not found: ${child.command}`;
  }
  if (err instanceof Deno.errors.PermissionDenied) {
    return `cannot execute ${child.command}: permission denied`;
  }
  if (err instanceof Deno.errors.NotCapable) {
    return `not allowed to run ${child.command} (the gateway needs --allow-run)`;
  }
  return `cannot start ${child.command}: ${message}`;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
