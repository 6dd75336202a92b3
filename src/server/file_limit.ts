/**
 * How many files this process may open, and so how many client connections fit beside
 * everything else it opens (children's pipes, the ledger, the log).
 */

/** File descriptors one client connection takes: its socket, and both ends of the inner one. */
const FILES_PER_CONNECTION = 3;
/** Kept free for children's pipes, the ledger and the runtime itself. */
const RESERVED_FILES = 128;

/**
 * The soft `RLIMIT_NOFILE` as a child shell sees it (`ulimit -n`; a child inherits the limit;
 * Deno's permissions keep `/proc/self/limits` from us), or undefined when unknown or unlimited.
 */
export async function processFileLimit(): Promise<number | undefined> {
  if (Deno.build.os === "windows") return undefined;
  try {
    const out = await new Deno.Command("sh", { args: ["-c", "ulimit -n"], stdin: "null" }).output();
    const limit = Number(new TextDecoder().decode(out.stdout).trim());
    return out.success && Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
  } catch {
    return undefined; // no sh: the configured cap stands
  }
}

/** The connection cap that fits in `fileLimit` (at least 1), or `configured` when it does. */
export function connectionCap(configured: number, fileLimit: number | undefined): number {
  if (fileLimit === undefined) return configured;
  const fits = Math.floor((fileLimit - RESERVED_FILES) / FILES_PER_CONNECTION);
  return Math.max(1, Math.min(configured, fits));
}
