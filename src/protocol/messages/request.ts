/**
 * The Anthropic Messages request body (zod, tolerant of unknown fields) and its translation into
 * the council's neutral `TurnInput`.
 */
import { z } from "zod";
import type { HostHints, ToolSpec, TranscriptEntry, TurnInput } from "../../council/types.ts";
import { placeholder } from "../../base/attachment.ts";
import { isProgressMarker } from "../ids.ts";
import { listOrString, ModelName, tolerantUnion } from "../tolerant_schema.ts";
import { EntryParts } from "../entry_parts.ts";
import { Document, documentParts, Image, imageParts } from "./message_attachments.ts";

const Text = z.object({ type: z.literal("text"), text: z.string() });
/** Content blocks: unknown types (server tool results, search results, …) are tolerated. */
const BLOCK = "a content block";

/** A string is shorthand for one text block. */
const content = <T extends z.ZodType>(block: T) =>
  listOrString(block, (text) => ({ type: "text", text }), "content blocks");

const ResultBlock = tolerantUnion([Text, Image, Document], BLOCK);
const ToolResult = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: content(ResultBlock).optional(),
  is_error: z.boolean().optional(),
});
const ToolUse = z.object({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
const Thinking = z.object({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string().optional(),
});
const RedactedThinking = z.object({ type: z.literal("redacted_thinking"), data: z.string() });

const MessageBlock = tolerantUnion([
  Text,
  Image,
  Document,
  ToolUse,
  ToolResult,
  Thinking,
  RedactedThinking,
], BLOCK);
type MessageBlock = z.infer<typeof MessageBlock>;

const Message = z.object({
  role: z.enum(["user", "assistant", "system"]),
  content: content(MessageBlock),
});

const Tool = z.object({
  name: z.string().min(1),
  type: z.string().optional(),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
});

export const MessagesRequestSchema = z.object({
  model: ModelName,
  messages: z.array(Message).min(1, { error: "at least one message is required" }),
  system: content(tolerantUnion([Text], BLOCK)).optional(),
  tools: z.array(Tool).optional(),
  stream: z.boolean().optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequestSchema>;

/** Claude Code's attribution block: harness metadata, not prompt (and it varies per conversation). */
const BILLING_HEADER = /^\s*x-anthropic-billing-header:/;

/** The blocks inside a tool_result: text, and images and documents as attachments. */
function resultParts(blocks: z.infer<typeof ResultBlock>[] | undefined): EntryParts {
  const parts = new EntryParts();
  for (const block of blocks ?? []) {
    if (block.type === "text") parts.texts.push(block.text);
    else if (block.type === "image") parts.add(imageParts(block));
    else if (block.type === "document") parts.add(documentParts(block));
  }
  return parts;
}

/** Our own progress thinking block, sent back by the host (CONTRACT.md §6.3). */
function isOwnProgressBlock(block: MessageBlock): boolean {
  return block.type === "thinking" && isProgressMarker(block.signature);
}

/**
 * One message's entries. Consecutive text-like blocks join into one entry, so a user message
 * that is `[reminder, ask]` stays one ask for classification and the session key.
 */
function messageEntries(role: "user" | "assistant" | "system", blocks: MessageBlock[]) {
  const entries: TranscriptEntry[] = [];
  let parts = new EntryParts();
  const flush = () => {
    if (!parts.empty) {
      // Only user messages carry images and documents; elsewhere they stay placeholders.
      entries.push(
        role === "user" ? { kind: role, ...parts.fields } : {
          kind: role,
          text: [...parts.texts, ...parts.attachments.map(placeholder)].join("\n"),
        },
      );
    }
    parts = new EntryParts();
  };
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.texts.push(block.text);
        break;
      case "image":
        parts.add(imageParts(block));
        break;
      case "document":
        parts.add(documentParts(block));
        break;
      case "thinking":
        // Ours is narration of an earlier turn; a real model's reasoning is kept as context.
        if (!isOwnProgressBlock(block) && block.thinking.trim()) parts.texts.push(block.thinking);
        break;
      case "tool_use":
        flush();
        entries.push({
          kind: "tool_call",
          id: block.id,
          name: block.name,
          input: block.input ?? {},
        });
        break;
      case "tool_result":
        flush();
        entries.push({
          kind: "tool_result",
          id: block.tool_use_id,
          ...resultParts(block.content).fields,
          isError: block.is_error ?? false,
        });
        break;
        // redacted_thinking is opaque; unknown block types carry nothing a child can use.
    }
  }
  flush();
  return entries;
}

/** The system prompt: text blocks joined, Claude Code's billing attribution line left out. */
function systemText(system: MessagesRequest["system"]): string {
  return (system ?? [])
    .flatMap((
      block,
    ) => (block.type === "text" && !BILLING_HEADER.test(block.text) ? [block.text] : []))
    .join("\n");
}

/** Declared client tools; server tools (typed, without an input schema) are not ours to call. */
function toolSpecs(tools: MessagesRequest["tools"]): ToolSpec[] {
  return (tools ?? [])
    .filter((tool) =>
      tool.input_schema !== undefined || tool.type === undefined || tool.type === "custom"
    )
    .map((tool) => ({
      name: tool.name,
      description: tool.description ?? "",
      inputSchema: tool.input_schema ?? { type: "object" },
    }));
}

/** CONTRACT.md §1.1.2: a continuation when the last user message carries a tool_result. */
function isContinuation(messages: MessagesRequest["messages"]): boolean {
  const lastUser = messages.findLast((m) => m.role === "user");
  return lastUser?.content.some((block) => block.type === "tool_result") ?? false;
}

/** The neutral turn input of a parsed Messages request. */
export function messagesTurnInput(
  request: MessagesRequest,
  hostCredentials?: Record<string, string>,
  hints?: HostHints,
): TurnInput {
  return {
    model: request.model,
    system: systemText(request.system),
    transcript: request.messages.flatMap((m) => messageEntries(m.role, m.content)),
    tools: toolSpecs(request.tools),
    continuation: isContinuation(request.messages),
    ...(hostCredentials ? { hostCredentials } : {}),
    ...(hints ? { hints } : {}),
  };
}
