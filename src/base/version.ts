/** The release version, embedded in the binary (kept equal to deno.json `version` by a test). */
export const VERSION = "0.1.0";
