/**
 * A throwaway home for one run of a CLI whose history cannot be switched off: a temp directory
 * whose CLI folder links every entry of the user's own (login, settings, extensions) except the
 * ones the CLI writes its history to, removed after the run.
 */
import { join } from "node:path";

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
  const path = await Deno.makeTempDir({ prefix: "council-home-" });
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

async function* readDirIfAny(dir: string): AsyncGenerator<Deno.DirEntry> {
  try {
    yield* Deno.readDir(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
