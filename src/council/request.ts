/**
 * Derives a TurnRequest from protocol-free input: working directory, classified ask, session key.
 */
import { isAbsolute } from "node:path";
import type { TranscriptEntry, TurnInput, TurnRequest } from "./types.ts";

// Compiled once: these run on every request.
/** `Primary working directory: /abs`, `Working directory: /abs`, `cwd: /abs` (one per line). */
const WORKING_DIR_LINE = /(?:^|[^a-z])(?:working directory|cwd):[ \t]*(\/[^\n\r]*)/gim;
/** Codex's `<environment_context>` block (in a user or developer message). */
const CODEX_CWD = /<environment_context>[\s\S]*?<cwd>([^<]+)<\/cwd>/gi;
const SCAFFOLDING_TAGS = [
  "system-reminder",
  "ide_opened_file",
  "ide_selection",
  "ide_diagnostics",
  "command-name",
  "command-message",
  "command-args",
  "local-command-stdout",
  "local-command-stderr",
  "environment_context",
  "user_instructions",
  "user-prompt-submit-hook",
  "session_context",
];
const SCAFFOLDING = new RegExp(
  SCAFFOLDING_TAGS.map((tag) => `<${tag}\\b[^>]*>[\\s\\S]*?</${tag}>`).join("|"),
  "gi",
);

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Every candidate working directory named in a text, in order of appearance. `lines: false`
 * looks only for Codex's `<environment_context>` block (for conversation text, where a user
 * typing `cwd: /` must not move the children).
 */
export function findWorkingDirectories(text: string, { lines = true } = {}): string[] {
  const found: { at: number; path: string }[] = [];
  for (const m of text.matchAll(CODEX_CWD)) found.push({ at: m.index, path: m[1].trim() });
  if (lines) {
    for (const m of text.matchAll(WORKING_DIR_LINE)) {
      found.push({ at: m.index, path: m[1].trim() });
    }
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.path);
}

/** The first candidate working directory in a text, if any. */
export function findWorkingDirectory(text: string): string | undefined {
  return findWorkingDirectories(text)[0];
}

/**
 * SPEC §1.1.3: the first absolute path named in the system prompt's environment block (or in
 * Codex's `<environment_context>`, which it puts in a system / user message) that exists as a
 * directory; undefined otherwise (children then run in an empty temp dir). `working directory:`
 * / `cwd:` lines count only in the system prompt; tool results and assistant text are not
 * searched at all: what a user types or a file contains must not move the children.
 */
export function recoverWorkingDirectory(
  system: string,
  transcript: readonly TranscriptEntry[],
  exists: (path: string) => boolean = isDirectory,
): string | undefined {
  const candidates = [
    ...findWorkingDirectories(system),
    ...transcript.flatMap((e) =>
      e.kind === "system" || e.kind === "user"
        ? findWorkingDirectories(e.text, { lines: false })
        : []
    ),
  ];
  return candidates.find((path) => isAbsolute(path) && exists(path));
}

/** Removes injected harness scaffolding (system reminders, IDE context, command wrappers). */
export function stripScaffolding(text: string): string {
  return text.replace(SCAFFOLDING, "").trim();
}

const inUserMessage = (e: TranscriptEntry) => e.kind === "user" || e.kind === "tool_result";

/**
 * The entries of the user message around `index`. A protocol may split one message into
 * several consecutive entries (text blocks, tool results), so a "message" is the run of
 * consecutive user / tool_result entries.
 */
function userMessageAt(
  transcript: readonly TranscriptEntry[],
  index: number,
): { start: number; entries: TranscriptEntry[] } {
  let start = index;
  while (start > 0 && inUserMessage(transcript[start - 1])) start--;
  let end = index;
  while (end + 1 < transcript.length && inUserMessage(transcript[end + 1])) end++;
  return { start, entries: transcript.slice(start, end + 1) };
}

function textsOf(entries: readonly TranscriptEntry[]): string[] {
  return entries.flatMap((e) => (e.kind === "user" ? [e.text] : []));
}

/**
 * SPEC §1.1.4: the last user message's text, scaffolding stripped; its raw text if nothing is
 * left. A tool-loop message (tool results plus, at most, injected reminders) is not an ask:
 * the ask is then the user's last real message before it.
 */
export function classifyAsk(transcript: readonly TranscriptEntry[]): string {
  let index = transcript.findLastIndex(inUserMessage);
  let fallback = "";
  while (index >= 0) {
    const message = userMessageAt(transcript, index);
    const texts = textsOf(message.entries);
    const stripped = texts.map(stripScaffolding).filter((t) => t !== "").join("\n\n");
    if (stripped) return stripped;
    const raw = texts.join("\n").trim();
    const toolLoop = message.entries.some((e) => e.kind === "tool_result");
    if (raw && !toolLoop) return raw;
    fallback ||= raw;
    index = transcript.findLastIndex((e, i) => i < message.start && inUserMessage(e));
  }
  return fallback;
}

/** SHA-256 hex of system prompt + first user message (SPEC §2.4). */
export async function sessionKeyOf(
  system: string,
  transcript: readonly TranscriptEntry[],
): Promise<string> {
  const first = transcript.findIndex((e) => e.kind === "user");
  const firstText = first < 0 ? "" : textsOf(userMessageAt(transcript, first).entries).join("\n");
  const data = new TextEncoder().encode(`${system}\u0000${firstText}`);
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Builds the council's TurnRequest from what the protocol layer extracted. */
export async function newTurnRequest(input: TurnInput): Promise<TurnRequest> {
  return {
    ...input,
    id: crypto.randomUUID().slice(0, 8),
    cwd: recoverWorkingDirectory(input.system, input.transcript),
    ask: classifyAsk(input.transcript),
    sessionKey: await sessionKeyOf(input.system, input.transcript),
  };
}
