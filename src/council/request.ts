/**
 * Derives a TurnRequest from protocol-free input: working directory, classified ask, session key.
 */
import { placeholder } from "../attachments.ts";
import type { TranscriptEntry, TurnInput, TurnRequest } from "./types.ts";
import { recoverWorkingDirectory, type WorkspacePolicy } from "./workdir.ts";

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

/** The user texts, each with its images and documents as placeholders (`[image: image/png]`). */
function textsOf(entries: readonly TranscriptEntry[]): string[] {
  return entries.flatMap((e) => {
    if (e.kind !== "user") return [];
    if (!e.attachments?.length) return [e.text];
    return [[e.text, ...e.attachments.map(placeholder)].filter((t) => t !== "").join("\n")];
  });
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
export async function newTurnRequest(
  input: TurnInput,
  policy: WorkspacePolicy = {},
): Promise<TurnRequest> {
  const workdir = recoverWorkingDirectory(input.system, input.transcript, policy);
  return {
    ...input,
    id: crypto.randomUUID().slice(0, 8),
    cwd: workdir.path,
    ...(workdir.note ? { cwdNote: workdir.note } : {}),
    ask: classifyAsk(input.transcript),
    sessionKey: await sessionKeyOf(input.system, input.transcript),
  };
}
