/**
 * Which session keys a `?session=` value may name: the key itself (SHA-256 hex, as the status
 * document shows it), or a host's own session id (Claude Code's `session_id`), which the council
 * keys as the SHA-256 of `host-session\0<id>`.
 */

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The council's session key for a host's session id. */
export function hostSessionKey(id: string): Promise<string> {
  return sha256Hex(`host-session\u0000${id.trim()}`);
}

/** Candidate keys for a `?session=` value, most specific first. */
export async function sessionKeysFor(value: string): Promise<string[]> {
  return [value, await hostSessionKey(value)];
}
