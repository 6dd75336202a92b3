/**
 * Which session keys a `?session=` value may name: the key itself (SHA-256 hex, as the status
 * document shows it), or a host's own session id (Claude Code's `session_id`), keyed as the
 * council keys a turn that carries it.
 */
import { sessionKeyFor } from "../council/session_key.ts";

/** The council's session key for a host's session id. */
export async function hostSessionKey(id: string): Promise<string> {
  return (await sessionKeyFor({ system: "", transcript: [], hints: { sessionId: id } })).key;
}

/** Candidate keys for a `?session=` value, most specific first. */
export async function sessionKeysFor(value: string): Promise<string[]> {
  return [value, await hostSessionKey(value)];
}
