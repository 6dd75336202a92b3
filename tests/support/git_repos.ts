/** Shared helpers of the workspace tests: real temporary git repositories and directories. */
import { join } from "node:path";

/** A temp directory (real path) removed when the `await using` scope ends. */
export async function tempDir(prefix = "council-ws-"): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

const decoder = new TextDecoder();

/** Runs git in `cwd` as a user would (own identity, no gateway settings); returns stdout. */
export function sh(cwd: string, ...args: string[]): string {
  const out = new Deno.Command("git", {
    args: ["-C", cwd, ...args],
    // Nothing from the tester's environment (e.g. a hook's GIT_DIR) may point git elsewhere.
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/",
      GIT_AUTHOR_NAME: "tester",
      GIT_AUTHOR_EMAIL: "tester@example.com",
      GIT_COMMITTER_NAME: "tester",
      GIT_COMMITTER_EMAIL: "tester@example.com",
    },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${decoder.decode(out.stderr)}`);
  }
  return decoder.decode(out.stdout);
}

/** Writes files (path → content) under `dir`, making parent directories. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    await Deno.writeTextFile(full, content);
  }
}

/** A repository in `dir` with `files` committed on `main`. */
export async function gitRepo(dir: string, files: Record<string, string>): Promise<void> {
  sh(dir, "init", "--quiet", "--initial-branch=main");
  await writeFiles(dir, files);
  sh(dir, "add", "--all");
  sh(dir, "commit", "--quiet", "-m", "initial");
}

export async function read(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** The repository's worktree paths other than its main one. */
export function linkedWorktrees(repo: string): string[] {
  return sh(repo, "worktree", "list", "--porcelain").split("\n")
    .flatMap((line) => line.startsWith("worktree ") ? [line.slice(9)] : []).slice(1);
}

/** Names in a directory (empty when it does not exist). */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** `git status --porcelain` of a working tree, as lines. */
export function status(dir: string): string[] {
  return sh(dir, "status", "--porcelain").split("\n").filter(Boolean);
}
