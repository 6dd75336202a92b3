/** Shared helpers for the distribution tests: run a process, find tools, make temp dirs. */
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Start from an empty environment (only `env` is set). */
  clearEnv?: boolean;
  stdin?: string;
}

/** Runs a command to completion and captures its output as text. */
export async function run(
  cmd: string,
  args: string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const child = new Deno.Command(cmd, {
    args,
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env,
    clearEnv: options.clearEnv ?? false,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** Absolute path of a command on PATH, or null. */
export async function which(command: string): Promise<string | null> {
  const { code, stdout } = await run("sh", ["-c", 'command -v "$1"', "sh", command]);
  const path = stdout.trim();
  return code === 0 && path.startsWith("/") ? path : null;
}

/** Says loudly why a test is skipped, so a missing tool never passes silently. */
export function skipNotice(test: string, reason: string): void {
  console.error(`\n*** SKIPPED ${test}: ${reason} ***\n`);
}

/** A temp dir removed after `fn`, whatever happens. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "council-gateway-dist-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
