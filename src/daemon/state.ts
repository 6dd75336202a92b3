/**
 * What `start` leaves for the other daemon commands: the PID file (the pid alone, as tools
 * expect) and a JSON state file with where the gateway listens and what it was started with.
 */
import { z } from "zod";
import type { DaemonPaths } from "./paths.ts";

const DaemonStateSchema = z.object({
  pid: z.number().int().positive(),
  /** Where a client on this machine reaches it, e.g. `http://127.0.0.1:6767`. */
  origin: z.string(),
  /** The configuration file it loaded, or null for defaults. */
  configPath: z.string().nullable(),
  /** ISO 8601. */
  startedAt: z.string(),
  version: z.string(),
});
export type DaemonState = z.infer<typeof DaemonStateSchema>;

/** Writes a file whole or not at all (a reader never sees half of it). */
function writeAtomic(path: string, text: string): void {
  const temp = `${path}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(temp, text, { mode: 0o600 });
  Deno.renameSync(temp, path);
}

export function writeDaemonState(paths: DaemonPaths, state: DaemonState): void {
  Deno.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeAtomic(paths.pid, `${state.pid}\n`);
  writeAtomic(paths.state, `${JSON.stringify(state, null, 2)}\n`);
}

/** The recorded state, or null when there is none or it is not ours. */
export function readDaemonState(paths: DaemonPaths): DaemonState | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(paths.state);
  } catch {
    return null;
  }
  try {
    const parsed = DaemonStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The pid in the PID file, or null. */
export function readPid(paths: DaemonPaths): number | null {
  try {
    const text = Deno.readTextFileSync(paths.pid).trim();
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}

export function removeDaemonState(paths: DaemonPaths): void {
  for (const path of [paths.pid, paths.state]) {
    try {
      Deno.removeSync(path);
    } catch { /* already gone */ }
  }
}
