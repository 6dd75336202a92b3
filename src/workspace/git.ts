/**
 * Runs the `git` on PATH for the workspace machinery, in an environment where nothing from the
 * gateway's own environment can redirect it and nothing of the user's repository configuration
 * runs code (hooks, fsmonitor) or starts housekeeping.
 */

/** A git command that failed: its arguments and git's own last words. */
export class GitError extends Error {
  override name = "GitError";
  constructor(readonly args: readonly string[], readonly code: number, readonly stderr: string) {
    super(`git ${args[0] ?? ""} failed (exit ${code}): ${lastLine(stderr) || "no message"}`);
  }
}

interface GitOptions {
  /** Directory git runs in (`git -C`). */
  cwd: string;
  /** Extra variables (e.g. GIT_INDEX_FILE for a private index, GIT_DIR/GIT_WORK_TREE). */
  env?: Record<string, string>;
  /** Bytes for git's stdin. */
  input?: Uint8Array;
  /** Exit codes that are answers rather than failures (e.g. 1 for a merge with conflicts). */
  okCodes?: readonly number[];
  signal?: AbortSignal;
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Settings for every call: no hooks (a post-checkout hook would run on `worktree add`), no
 * fsmonitor daemon, no automatic gc, stable paths in output.
 */
const SAFE_CONFIG = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "gc.auto=0",
  "-c",
  "core.quotePath=false",
  "-c",
  "advice.detachedHead=false",
];

/** The commits the gateway records (snapshots, candidates' changes) are signed with this. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "council-gateway",
  GIT_AUTHOR_EMAIL: "council-gateway@localhost",
  GIT_COMMITTER_NAME: "council-gateway",
  GIT_COMMITTER_EMAIL: "council-gateway@localhost",
};

/** The gateway's environment without variables that would point git elsewhere. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (!name.startsWith("GIT_")) env[name] = value;
  }
  return { ...env, ...IDENTITY, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" };
}

const decoder = new TextDecoder();

/** Runs git; a non-zero exit outside `okCodes` throws a `GitError`. */
export async function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const command = new Deno.Command("git", {
    args: [...SAFE_CONFIG, "-C", options.cwd, ...args],
    env: { ...baseEnv(), ...options.env },
    clearEnv: true,
    stdin: options.input ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  });
  const child = command.spawn();
  // Read while writing, or a git that fills its stdout pipe before reading stdin would stall.
  const collected = child.output();
  if (options.input) {
    const writer = child.stdin.getWriter();
    // A git that exits early closes its stdin; its exit code tells the story, not this write.
    await writer.write(options.input).catch(() => {});
    await writer.close().catch(() => {});
  }
  const output = await collected;
  const result = {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
  if (result.code !== 0 && !(options.okCodes ?? []).includes(result.code)) {
    throw new GitError(args, result.code, result.stderr);
  }
  return result;
}

/** The trimmed output of a git command that prints one value (an object id, a path). */
export async function gitValue(args: readonly string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.trim();
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1)?.trim() ?? "";
}
