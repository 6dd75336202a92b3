/** Shared helpers for the foundation tests: temp dirs, fake executables, env maps. */
import { join } from "node:path";

/** A temp directory removed by the returned dispose function. */
export async function tempDir(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const path = await Deno.makeTempDir({ prefix: "cg-foundation-" });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true });
    },
  };
}

/** Writes an executable POSIX shell script. */
export async function writeScript(dir: string, name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** An env lookup over a plain map (nothing leaks in from the real environment). */
export function envOf(
  vars: Record<string, string | undefined>,
): (name: string) => string | undefined {
  return (name) => vars[name];
}

/** Writes text to a file in dir and returns its path. */
export async function writeFile(dir: string, name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
  return path;
}
