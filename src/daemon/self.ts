/**
 * How to run this program again as a new process: the compiled binary itself, or the same Deno
 * running the same entry point with the start task's flags (its permissions and V8 flags, read
 * from the deno.json beside the entry point, so they are defined once).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface SelfInvocation {
  /** The executable. */
  command: string;
  /** Arguments before the subcommand's own. */
  args: string[];
}

const PERMISSIONS = ["net", "read", "write", "env", "run", "sys"] as const;

/** The flags of a `deno run <flags> main.ts …` task (empty when it is not one). */
export function startTaskFlags(task: string): string[] {
  const words = task.trim().split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run") return [];
  const entry = words.findIndex((word, i) => i >= 2 && !word.startsWith("-"));
  return words.slice(2, entry < 0 ? words.length : entry);
}

/** Without a readable start task: the permissions this process has. */
function grantedFlags(): string[] {
  return PERMISSIONS.filter((name) => Deno.permissions.querySync({ name }).state === "granted")
    .map((name) => `--allow-${name}`);
}

function readStartTask(config: string): string | undefined {
  try {
    const json = JSON.parse(Deno.readTextFileSync(config));
    return typeof json?.tasks?.start === "string" ? json.tasks.start : undefined;
  } catch {
    return undefined;
  }
}

/** Arguments that make `deno` run `mainModule` as `deno task start` runs it. */
function denoRunArgs(mainModule: string): string[] {
  const entry = mainModule.startsWith("file:") ? fileURLToPath(mainModule) : mainModule;
  const config = join(dirname(entry), "deno.json");
  const task = readStartTask(config);
  if (task === undefined) return ["run", ...grantedFlags(), entry];
  return ["run", "--config", config, ...startTaskFlags(task), entry];
}

/** What decides how this program runs again. */
interface Runtime {
  /** A compiled binary (`deno compile`): the executable is the program itself. */
  standalone: boolean;
  /** The running executable: the binary, or deno. */
  execPath: string;
  mainModule: string;
}

const thisRuntime = (): Runtime => ({
  standalone: Deno.build.standalone,
  execPath: Deno.execPath(),
  mainModule: Deno.mainModule,
});

/** This program as a new process would run it. */
export function selfInvocation(runtime: Runtime = thisRuntime()): SelfInvocation {
  if (runtime.standalone) return { command: runtime.execPath, args: [] };
  return { command: runtime.execPath, args: denoRunArgs(runtime.mainModule) };
}

/** A word as a POSIX shell reads it back. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_\-.,:/@%+=]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** This program with `args`, as one shell command line (for settings a shell runs). */
export function selfCommandLine(...args: string[]): string {
  const { command, args: base } = selfInvocation();
  return [command, ...base, ...args].map(shellWord).join(" ");
}
