/**
 * A prompt as the message lists of the model APIs: the preamble as the system prompt, the
 * conversation as alternating user and assistant messages, this call's request at the end, and
 * for Anthropic, cache breakpoints on the part that stays the same from turn to turn. The
 * turn's attachments open the first user message (new ones only extend the list).
 */
import type { LabelledAttachment } from "../../base/attachment.ts";
import { anthropicBlocks, attachmentBlocks, type ContentBlock } from "./anthropic_blocks.ts";
import { unseenNote, withNotes } from "../attachment_notes.ts";
import { attachmentParts, type ContentPart, openaiParts } from "./openai_parts.ts";
import { sectionText } from "../prompt_text.ts";
import type { AgentPrompt, PromptEntry, PromptSection, StructuredPrompt } from "../types.ts";

/** Anthropic looks for an earlier cache entry at most 20 blocks before a breakpoint. */
const ANCHOR_EVERY_BLOCKS = 16;
const EPHEMERAL = { type: "ephemeral" } as const;
/** Stands first when a conversation starts with the assistant (the APIs want a user first). */
const CONVERSATION_START = "(conversation start)";

type Role = PromptEntry["role"];
type Attachments = readonly LabelledAttachment[] | undefined;

/** An entry's text: the tag is left out where the message's role already says it. */
function blockText(entry: PromptEntry): string {
  const text = entry.text.trim() ? entry.text : "(empty)";
  return entry.tag === entry.role ? text : `[${entry.tag}]\n${text}`;
}

function sectionsText(sections: readonly PromptSection[]): string {
  return sections.map((s) => sectionText(s.title, s.body)).join("\n");
}

/** Consecutive blocks of one role as one message, a user message first. */
function runs(prompt: StructuredPrompt): { role: Role; texts: string[] }[] {
  const out: { role: Role; texts: string[] }[] = [];
  for (const entry of prompt.conversation) {
    const last = out.at(-1);
    if (!last && entry.role === "assistant") {
      out.push({ role: "user", texts: [CONVERSATION_START] });
    }
    const current = out.at(-1);
    if (current?.role === entry.role) current.texts.push(blockText(entry));
    else out.push({ role: entry.role, texts: [blockText(entry)] });
  }
  return out;
}

/** The Messages API's `system` and `messages` for a prompt. */
export function anthropicMessages(prompt: AgentPrompt, attachments?: Attachments): {
  system?: ContentBlock[];
  messages: { role: Role; content: string | ContentBlock[] }[];
} {
  if (typeof prompt === "string") {
    const content = attachments?.length ? anthropicBlocks(prompt, attachments) : prompt;
    return { messages: [{ role: "user", content }] };
  }
  const messages = runs(prompt).map(({ role, texts }) => ({
    role,
    content: texts.map((text): ContentBlock => ({ type: "text", text })),
  }));
  // Breakpoints: the last block of the conversation (read back by the next turn), and an anchor
  // that moves only every few blocks, for a turn that adds more than the look-back reaches.
  const blocks = messages.flatMap((m) => m.content);
  if (blocks.length > 0) {
    const last = blocks.length - 1;
    const anchor = Math.floor(last / ANCHOR_EVERY_BLOCKS) * ANCHOR_EVERY_BLOCKS;
    for (const i of new Set([anchor, last])) blocks[i].cache_control = EPHEMERAL;
  }
  const request = prompt.request.map((s): ContentBlock => ({
    type: "text",
    text: sectionText(s.title, s.body),
  }));
  if (messages.at(-1)?.role === "user") messages.at(-1)!.content.push(...request);
  else messages.push({ role: "user", content: request });
  if (attachments?.length) messages[0].content.unshift(...attachmentBlocks(attachments));
  const system = sectionsText(prompt.preamble);
  return {
    ...(system ? { system: [{ type: "text", text: system, cache_control: EPHEMERAL }] } : {}),
    messages,
  };
}

type ChatMessage = { role: "system" | Role; content: string | ContentPart[] };

/** Chat Completions `messages` (and the cache key) for a prompt. */
export function openaiMessages(
  prompt: AgentPrompt,
  attachments?: Attachments,
  takesFiles = false,
): { messages: ChatMessage[]; prompt_cache_key?: string } {
  if (typeof prompt === "string") {
    const content = attachments?.length ? openaiParts(prompt, attachments, takesFiles) : prompt;
    return { messages: [{ role: "user", content }] };
  }
  const system = sectionsText(prompt.preamble);
  const conversation = runs(prompt).map(({ role, texts }) => ({
    role,
    content: texts.join("\n\n"),
  }));
  // Appended to the last user message rather than sent as one more: some servers' chat
  // templates refuse two user messages in a row.
  const { parts, unsent } = attachmentParts(attachments ?? [], takesFiles);
  const request = withNotes(sectionsText(prompt.request), unseenNote(unsent));
  const last = conversation.at(-1);
  if (last?.role === "user") last.content = `${last.content}\n\n${request}`;
  else conversation.push({ role: "user", content: request });
  const messages: ChatMessage[] = [
    ...(system ? [{ role: "system" as const, content: system }] : []),
    ...conversation.map(({ role, content }, i): ChatMessage => ({
      role,
      content: i === 0 && parts.length ? [...parts, { type: "text", text: content }] : content,
    })),
  ];
  return { messages, ...(prompt.cacheKey ? { prompt_cache_key: prompt.cacheKey } : {}) };
}
