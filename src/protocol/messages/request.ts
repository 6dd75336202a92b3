/**
 * The Anthropic Messages request body (zod, tolerant of unknown fields) and its translation into
 * the council's neutral `TurnInput`.
 */
import { z } from "zod";
import type { ToolSpec, TranscriptEntry, TurnInput } from "../../council/types.ts";
import { isProgressMarker } from "../ids.ts";
import { listOrString, ModelName, tolerantUnion } from "../schema.ts";

const Text = z.object({ type: z.literal("text"), text: z.string() });
const Image = z.object({
  type: z.literal("image"),
  source: z.looseObject({ type: z.string().optional(), media_type: z.string().optional() })
    .optional(),
});
const Document = z.object({ type: z.literal("document"), title: z.string().nullish() });
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

function imagePlaceholder(block: z.infer<typeof Image>): string {
  const type = block.source?.media_type;
  return type ? `[image: ${type}]` : "[image]";
}

/** Text of the blocks inside a tool_result (images and documents become short placeholders). */
function resultText(blocks: z.infer<typeof ResultBlock>[] | undefined): string {
  const parts: string[] = [];
  for (const block of blocks ?? []) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "image") parts.push(imagePlaceholder(block));
    else if (block.type === "document") {
      parts.push(`[document${block.title ? `: ${block.title}` : ""}]`);
    }
  }
  return parts.join("\n");
}

/** Our own progress thinking block, sent back by the host (SPEC §6.3). */
export function isOwnProgressBlock(block: MessageBlock): boolean {
  return block.type === "thinking" && isProgressMarker(block.signature);
}

/**
 * One message's entries. Consecutive text-like blocks join into one entry, so a user message
 * that is `[reminder, ask]` stays one ask for classification and the session key.
 */
function messageEntries(role: "user" | "assistant" | "system", blocks: MessageBlock[]) {
  const entries: TranscriptEntry[] = [];
  let texts: string[] = [];
  const flush = () => {
    if (texts.length > 0) entries.push({ kind: role, text: texts.join("\n") });
    texts = [];
  };
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "image":
        texts.push(imagePlaceholder(block));
        break;
      case "document":
        texts.push(`[document${block.title ? `: ${block.title}` : ""}]`);
        break;
      case "thinking":
        // Ours is narration of an earlier turn; a real model's reasoning is kept as context.
        if (!isOwnProgressBlock(block) && block.thinking.trim()) texts.push(block.thinking);
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
          text: resultText(block.content),
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
export function systemText(system: MessagesRequest["system"]): string {
  return (system ?? [])
    .flatMap((
      block,
    ) => (block.type === "text" && !BILLING_HEADER.test(block.text) ? [block.text] : []))
    .join("\n");
}

/** Declared client tools; server tools (typed, without an input schema) are not ours to call. */
export function toolSpecs(tools: MessagesRequest["tools"]): ToolSpec[] {
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

/** SPEC §1.1.2: a continuation when the last user message carries a tool_result. */
export function isContinuation(messages: MessagesRequest["messages"]): boolean {
  const lastUser = messages.findLast((m) => m.role === "user");
  return lastUser?.content.some((block) => block.type === "tool_result") ?? false;
}

/** The neutral turn input of a parsed Messages request. */
export function messagesTurnInput(
  request: MessagesRequest,
  hostCredentials?: Record<string, string>,
): TurnInput {
  return {
    model: request.model,
    system: systemText(request.system),
    transcript: request.messages.flatMap((m) => messageEntries(m.role, m.content)),
    tools: toolSpecs(request.tools),
    continuation: isContinuation(request.messages),
    ...(hostCredentials ? { hostCredentials } : {}),
  };
}
