/**
 * A throwaway home for one run of a CLI whose history cannot be switched off: a temp directory
 * whose CLI folder links every entry of the user's own (login, settings, extensions) except the
 * ones the CLI writes its history to, removed after the run. It keeps its path from one run to
 * the next where it can, as gemini names it in the system prompt it sends: a new path each run
 * would change that prompt early and void the provider's cache of everything after it.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Runs of one CLI at once that get a stable path; more get a random one. */
const SLOTS = 16;

/** Where a CLI keeps its state, and which of its entries hold history. */
export interface StateHomeSpec {
  /** The variable the CLI takes its home from (e.g. GEMINI_CLI_HOME); HOME otherwise. */
  variable: string;
  /** The CLI's folder under that home (e.g. ".gemini"). */
  dir: string;
  /** Entries of the user's folder not linked: where the CLI records chats and projects. */
  unlinked: readonly string[];
}

export interface ThrowawayHome {
  /** The value for `spec.variable` in the child's environment. */
  path: string;
  remove(): Promise<void>;
}

/** Makes the throwaway home for a child whose environment is `env` (its HOME, or the variable). */
export async function throwawayHome(
  spec: StateHomeSpec,
  env: Readonly<Record<string, string>>,
): Promise<ThrowawayHome> {
  const userHome = env[spec.variable] || env.HOME;
  const path = await claimDirectory(spec);
  const remove = () => Deno.remove(path, { recursive: true }).catch(() => {});
  try {
    const own = join(path, spec.dir);
    await Deno.mkdir(own);
    if (userHome) {
      const source = join(userHome, spec.dir);
      for await (const entry of readDirIfAny(source)) {
        if (spec.unlinked.includes(entry.name)) continue;
        await Deno.symlink(join(source, entry.name), join(own, entry.name));
      }
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}

function currentUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}

/** This user's own directory for throwaway homes (0700, not a link), or undefined if unsafe. */
async function privateRoot(): Promise<string | undefined> {
  const uid = currentUid();
  const root = join(tmpdir(), `council-home-${uid ?? "user"}`);
  try {
    await Deno.mkdir(root, { mode: 0o700 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) return undefined;
  }
  const info = await Deno.lstat(root);
  if (!info.isDirectory || info.isSymlink) return undefined;
  if (uid !== null && (info.uid !== uid || ((info.mode ?? 0) & 0o077) !== 0)) return undefined;
  return root;
}

/** The first free slot for this CLI under the private root, else a random temp directory. */
async function claimDirectory(spec: StateHomeSpec): Promise<string> {
  const root = await privateRoot();
  for (let n = 0; root && n < SLOTS; n++) {
    const path = join(root, `${spec.dir.replace(/^\./, "")}-${n}`);
    try {
      await Deno.mkdir(path, { mode: 0o700 });
      return path;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) break;
    }
  }
  return await Deno.makeTempDir({ prefix: "council-home-" });
}

async function* readDirIfAny(dir: string): AsyncGenerator<Deno.DirEntry> {
  try {
    yield* Deno.readDir(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
