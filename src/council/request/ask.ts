/**
 * The user's actual ask (CONTRACT.md §1.1.4): the last user message with injected harness scaffolding
 * stripped.
 */
import { placeholder } from "../../base/attachment.ts";
import type { TranscriptEntry } from "../types.ts";

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
export function userMessageAt(
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
export function textsOf(entries: readonly TranscriptEntry[]): string[] {
  return entries.flatMap((e) => {
    if (e.kind !== "user") return [];
    if (!e.attachments?.length) return [e.text];
    return [[e.text, ...e.attachments.map(placeholder)].filter((t) => t !== "").join("\n")];
  });
}

/**
 * CONTRACT.md §1.1.4: the last user message's text, scaffolding stripped; its raw text if nothing is
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
