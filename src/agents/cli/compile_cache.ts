/**
 * Where Node-based agent CLIs keep their compiled code between runs (`NODE_COMPILE_CACHE`, read by
 * Node 22.1 and later, ignored by older ones), so that each child does not compile its bundle
 * anew.
 */
import { join } from "node:path";

/**
 * The directory for `NODE_COMPILE_CACHE` in children, from the gateway's environment: none when
 * the user set the variable (theirs reaches the children) or switched the cache off, else one
 * under the user's cache directory.
 */
export function nodeCompileCacheDir(env: Record<string, string | undefined>): string | undefined {
  if (env.NODE_COMPILE_CACHE !== undefined || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const cacheHome = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, ".cache") : undefined);
  return cacheHome ? join(cacheHome, "council-gateway", "node-compile-cache") : undefined;
}
