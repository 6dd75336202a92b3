/**
 * A prompt as the one text a CLI child reads on stdin: the preamble's sections, the conversation,
 * then the request's sections, in that order, so that what earlier turns sent stays a
 * byte-identical beginning of what later turns send.
 */
import type { AgentPrompt, PromptEntry } from "./types.ts";

/** `=== title ===` and the body, trimmed, on the lines below. */
export function sectionText(title: string, body: string): string {
  return `=== ${title} ===\n${body.trim()}\n`;
}

/** An entry under its `[tag]` line. */
export function entryText(entry: PromptEntry): string {
  return `[${entry.tag}]\n${entry.text}`;
}

/** The whole prompt as text (a string prompt is already one). */
export function promptText(prompt: AgentPrompt): string {
  if (typeof prompt === "string") return prompt;
  const conversation = prompt.conversation.map(entryText).join("\n\n");
  return [
    ...prompt.preamble.map((s) => sectionText(s.title, s.body)),
    sectionText(prompt.conversationTitle, conversation || "(empty)"),
    ...prompt.request.map((s) => sectionText(s.title, s.body)),
  ].join("\n");
}
