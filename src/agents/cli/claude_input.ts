/**
 * A prompt as the stream-json user message Claude Code reads on stdin (`--input-format
 * stream-json`): the same text as a CLI child reads, split into blocks at the conversation's
 * entries, with a cache breakpoint on the last entry. Claude Code marks only the end of its own
 * input, so without it a later turn could read nothing of the conversation from Anthropic's
 * prompt cache; with it, the next turn finds this turn's entry within the API's look-back.
 * Claude Code keeps two breakpoints in its system prompt and one on the last block: this one is
 * the fourth, the API's limit. The turn's images and documents come first, each after its label.
 */
import type { LabelledAttachment } from "../../base/attachment.ts";
import { attachmentBlocks, type ContentBlock } from "../http/anthropic_blocks.ts";
import { entryText, sectionText } from "../prompt_text.ts";
import type { AgentPrompt } from "../types.ts";

type TextBlock = { type: "text"; text: string; cache_control?: { type: "ephemeral" } };

function blocksOf(prompt: AgentPrompt): TextBlock[] {
  if (typeof prompt === "string") return [{ type: "text", text: prompt || "(empty)" }];
  const head = [
    ...prompt.preamble.map((s) => sectionText(s.title, s.body)),
    `=== ${prompt.conversationTitle} ===\n`,
  ].join("\n");
  // Every entry ends the same way, so an entry's block is the same text on every later turn.
  const entries = prompt.conversation.map((e): TextBlock => ({
    type: "text",
    text: `${entryText(e)}\n\n`,
  }));
  if (entries.length > 0) entries[entries.length - 1].cache_control = { type: "ephemeral" };
  const request = prompt.request.map((s) => sectionText(s.title, s.body)).join("\n");
  return [
    { type: "text", text: head },
    ...(entries.length ? entries : [{ type: "text" as const, text: "(empty)\n\n" }]),
    { type: "text", text: request || "(no task)" },
  ];
}

/** The one stdin line: a user message with the attachments' and the prompt's blocks. */
export function claudeInputLine(
  prompt: AgentPrompt,
  attachments: readonly LabelledAttachment[] = [],
): string {
  const content: ContentBlock[] = [...attachmentBlocks(attachments), ...blocksOf(prompt)];
  const message = { role: "user", content };
  return `${JSON.stringify({ type: "user", message })}\n`;
}
