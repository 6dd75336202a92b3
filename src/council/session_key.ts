/**
 * A turn's session key (CONTRACT.md §2.4): the host's own conversation id when it sends one, otherwise
 * a hash over the system prompt and the first user message with their volatile lines normalised.
 */
import { textsOf, userMessageAt } from "./request/ask.ts";
import type { TranscriptEntry, TurnInput } from "./types.ts";

/**
 * Lines a host rewrites between invocations of one conversation: Claude Code 2.1.197 names the
 * model differently on `--continue` ("(1M context)" / "[1m]" come and go), and the date, the
 * OS version and the git status snapshot change from one day or commit to the next.
 */
const VOLATILE_LINES: readonly RegExp[] = [
  /^.*\byou are powered by the model\b.*$/gim,
  /^.*\bexact model id is\b.*$/gim,
  /^.*\btoday's date is\b.*$/gim,
  /^.*<current_date>.*<\/current_date>.*$/gim,
  /^\s*-?\s*os version:.*$/gim,
];
/**
 * Claude Code's git snapshot (the end of its prompt): from its `gitStatus:` line through the
 * list of recent commits, or to the next heading or the end when there is no such list.
 */
const GIT_STATUS =
  /^gitStatus:(?:[\s\S]*?^Recent commits:\n(?:[0-9a-f]{6,40} .*(?:\n|$))*|[\s\S]*?(?=^#{1,6} |(?![\s\S])))/gm;

/** The text with every volatile line and the git snapshot removed. */
export function normaliseVolatile(text: string): string {
  let out = text.replace(GIT_STATUS, "");
  for (const pattern of VOLATILE_LINES) out = out.replace(pattern, "");
  return out;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 hex of system prompt + first user message (CONTRACT.md §2.4), volatile lines normalised. */
export function sessionKeyOf(
  system: string,
  transcript: readonly TranscriptEntry[],
): Promise<string> {
  const first = transcript.findIndex((e) => e.kind === "user");
  const firstText = first < 0 ? "" : textsOf(userMessageAt(transcript, first).entries).join("\n");
  return sha256Hex(`${normaliseVolatile(system)}\u0000${normaliseVolatile(firstText)}`);
}

/** Where a turn's session key came from. */
type SessionSource = "host" | "hash";

/**
 * The session key: a hash of the host's session id when it sent one (`/clear` and a new
 * conversation get new ids; `--continue` keeps it), else `sessionKeyOf`.
 */
export async function sessionKeyFor(
  input: Pick<TurnInput, "system" | "transcript" | "hints">,
): Promise<{ key: string; source: SessionSource }> {
  const id = input.hints?.sessionId?.trim();
  if (id) return { key: await sha256Hex(`host-session\u0000${id}`), source: "host" };
  return { key: await sessionKeyOf(input.system, input.transcript), source: "hash" };
}
