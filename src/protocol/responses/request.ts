/**
 * The OpenAI Responses request body (zod, tolerant of unknown fields and item types) and its
 * translation into the council's neutral `TurnInput` (always with an empty tool list, §1.1.8).
 */
import { z } from "zod";
import { placeholder } from "../../base/attachment.ts";
import type { HostHints, TranscriptEntry, TurnInput } from "../../council/types.ts";
import { isProgressItemId, isProgressMarker } from "../ids.ts";
import { EntryParts } from "../entry_parts.ts";
import { listOrString, ModelName, tolerantUnion } from "../tolerant_schema.ts";
import { FilePart, fileParts, ImagePart, imageParts } from "./input_attachments.ts";

const TextPart = z.object({
  type: z.enum(["input_text", "output_text", "text", "summary_text"]),
  text: z.string(),
});
const Refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });
const Part = tolerantUnion([TextPart, Refusal, ImagePart, FilePart], "a content part");
type Part = z.infer<typeof Part>;

/** A string is shorthand for one text part. */
const Parts = listOrString(Part, (text) => ({ type: "input_text", text }), "content parts");

const MessageItem = z.object({
  type: z.literal("message"),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: Parts,
});
const FunctionCall = z.object({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});
const FunctionCallOutput = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: Parts,
});
const CustomToolCall = z.object({
  type: z.literal("custom_tool_call"),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
});
const CustomToolCallOutput = z.object({
  type: z.literal("custom_tool_call_output"),
  call_id: z.string(),
  output: Parts,
});
const Reasoning = z.object({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: z.array(z.object({ text: z.string() })).optional(),
  encrypted_content: z.string().nullish(),
});
/** Item types we do not interpret (web search calls, compaction, item references, …) parse as
 * `other`; the short form `{role, content}` is a message. */
const Item = tolerantUnion(
  [MessageItem, FunctionCall, FunctionCallOutput, CustomToolCall, CustomToolCallOutput, Reasoning],
  "an input item",
  (
    item,
  ) => (item.type === undefined && item.role !== undefined ? { ...item, type: "message" } : item),
);
type Item = z.infer<typeof Item>;

export const ResponsesRequestSchema = z.object({
  model: ModelName,
  instructions: z.string().nullish(),
  input: listOrString(
    Item,
    (text) => ({ type: "message", role: "user", content: text }),
    "input items",
  ).refine((items) => items.length > 0, "at least one input item is required"),
  // Declared tools never reach the council (answers only); any shape is accepted.
  tools: z.array(z.unknown()).nullish(),
  stream: z.boolean().nullish(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;

/** The text of an item's parts, with its images and files as attachments. */
function entryParts(parts: Part[]): EntryParts {
  const entry = new EntryParts();
  for (const part of parts) {
    switch (part.type) {
      case "refusal":
        if (part.refusal) entry.texts.push(part.refusal);
        break;
      case "input_image":
        entry.add(imageParts(part));
        break;
      case "input_file":
        entry.add(fileParts(part));
        break;
      case "other":
        break;
      default:
        if (part.text) entry.texts.push(part.text);
    }
  }
  return entry;
}

/** Our own progress reasoning item, sent back by the host (CONTRACT.md §6.3). */
function isOwnProgressItem(item: Item): boolean {
  return item.type === "reasoning" &&
    (isProgressItemId(item.id) || isProgressMarker(item.encrypted_content));
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function itemEntry(item: Item): TranscriptEntry | undefined {
  switch (item.type) {
    case "message": {
      const parts = entryParts(item.content);
      if (parts.empty) return undefined;
      if (item.role === "user") return { kind: "user", ...parts.fields };
      // A developer message is the Responses name for a system message.
      const kind = item.role === "developer" ? "system" : item.role;
      const text = [...parts.texts, ...parts.attachments.map(placeholder)].join("\n");
      return { kind, text };
    }
    case "function_call":
      return {
        kind: "tool_call",
        id: item.call_id,
        name: item.name,
        input: parseArguments(item.arguments),
      };
    case "custom_tool_call":
      return { kind: "tool_call", id: item.call_id, name: item.name, input: item.input };
    case "function_call_output":
    case "custom_tool_call_output":
      return {
        kind: "tool_result",
        id: item.call_id,
        ...entryParts(item.output).fields,
        isError: false,
      };
    case "reasoning": {
      // Ours is narration of an earlier turn; a real model's summary is kept as context.
      if (isOwnProgressItem(item)) return undefined;
      const text = (item.summary ?? []).map((s) => s.text).join("\n").trim();
      return text ? { kind: "assistant", text } : undefined;
    }
    case "other":
      return undefined;
  }
}

/**
 * The neutral turn input of a parsed Responses request. `instructions` plus the leading
 * developer/system messages (Codex's base prompt) form the system prompt; later ones stay in
 * the transcript as system entries, so the session key does not move when Codex adds one.
 * Items we ignore (e.g. Codex's `additional_tools`) do not end the leading run.
 */
export function responsesTurnInput(
  request: ResponsesRequest,
  hostCredentials?: Record<string, string>,
  hints?: HostHints,
): TurnInput {
  const system: string[] = request.instructions ? [request.instructions] : [];
  const transcript: TranscriptEntry[] = [];
  for (const item of request.input) {
    const entry = itemEntry(item);
    if (!entry) continue;
    if (entry.kind === "system" && transcript.length === 0) system.push(entry.text);
    else transcript.push(entry);
  }
  return {
    model: request.model,
    system: system.join("\n\n"),
    transcript,
    tools: [],
    continuation: isContinuation(request.input),
    ...(hostCredentials ? { hostCredentials } : {}),
    ...(hints ? { hints } : {}),
  };
}

/** CONTRACT.md §1.1.2: a continuation when the last input item is a function_call_output. */
function isContinuation(items: readonly Item[]): boolean {
  const last = items.at(-1);
  return last?.type === "function_call_output" || last?.type === "custom_tool_call_output";
}
