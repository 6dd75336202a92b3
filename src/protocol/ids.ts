/**
 * Ids we mint for replies, and the marker that lets us recognise our own progress blocks when a
 * host sends them back (CONTRACT.md §6.3: they must never reach a child or change the session key).
 */

/** Prefix of every progress signature / `encrypted_content` we mint. Versioned on purpose. */
const PROGRESS_MARKER = "council-gateway.progress.v1.";
/** Prefix of the id of our Responses reasoning item (Codex echoes ids verbatim). */
const PROGRESS_ITEM_PREFIX = "rs_cgwprogress_";

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/** A fresh id such as `msg_3f9a…` (24 hex characters after the prefix). */
export function newId(prefix: string): string {
  return `${prefix}${randomHex(12)}`;
}

/** The placeholder signature of a progress thinking block (or reasoning `encrypted_content`). */
export function newProgressSignature(): string {
  return `${PROGRESS_MARKER}${randomHex(12)}`;
}

/** The id of a progress reasoning item. */
export function newProgressItemId(): string {
  return newId(PROGRESS_ITEM_PREFIX);
}

/** Whether an opaque value (signature, encrypted_content) is one of our progress markers. */
export function isProgressMarker(value: unknown): boolean {
  return typeof value === "string" && value.startsWith(PROGRESS_MARKER);
}

/** Whether a reasoning item id is one we minted for progress. */
export function isProgressItemId(value: unknown): boolean {
  return typeof value === "string" && value.startsWith(PROGRESS_ITEM_PREFIX);
}
