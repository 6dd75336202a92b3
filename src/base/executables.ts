/** Finds executable files as exec would: one execute-bit check and one PATH walk for everyone. */
import { isAbsolute, join } from "node:path";

/** Whether `path` is a file with an execute bit (on Windows, where mode is null, any file). */
export function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && (info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** Where `findExecutable` looks. */
interface ExecutableSearch {
  /** The PATH a bare name is searched in. */
  path?: string;
  /** What relative paths (a command with a slash, a relative PATH entry) are relative to. */
  cwd?: string;
  /** Windows: the extensions to try (PATHEXT). */
  pathExt?: string;
  os?: typeof Deno.build.os;
}

/**
 * The executable file a command names: a command with a slash is taken as a path, a bare name
 * is searched in `path`. Undefined when no executable file is found.
 */
export function findExecutable(command: string, search: ExecutableSearch = {}): string | undefined {
  const windows = (search.os ?? Deno.build.os) === "windows";
  const extensions = windows
    ? ["", ...(search.pathExt ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  const place = (file: string) => (search.cwd && !isAbsolute(file) ? join(search.cwd, file) : file);
  const first = (file: string) => extensions.map((ext) => file + ext).find(isExecutableFile);
  if (command.includes("/") || (windows && command.includes("\\"))) return first(place(command));
  for (const dir of (search.path ?? "").split(windows ? ";" : ":")) {
    if (!dir) continue;
    const found = first(join(place(dir), command));
    if (found) return found;
  }
  return undefined;
}

/** Finds an executable on the PATH of `env` (honouring PATHEXT on Windows); its path, or null. */
export function findOnPath(
  command: string,
  env: (name: string) => string | undefined,
): string | null {
  return findExecutable(command, { path: env("PATH"), pathExt: env("PATHEXT") }) ?? null;
}
