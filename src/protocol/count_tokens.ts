/**
 * The token estimate of `POST /v1/messages/count_tokens` (CONTRACT.md §2.2, §4.3, §8): about
 * ceil(characters / 4) over the system prompt, every message's text, tool_use inputs,
 * tool_result contents and the tool definitions, plus each image and document by the rule of
 * attachment_tokens.ts (never by its base64 length). An estimate, not a tokenizer.
 */
import { type Attachment, PDF } from "../base/attachment.ts";
import { attachmentTokens } from "./attachment_tokens.ts";

/** Characters per token of the estimate. */
export const CHARS_PER_TOKEN = 4;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function jsonLength(value: unknown): number {
  if (value === undefined) return 0;
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/** What is counted: characters (text) and tokens (images and documents). */
class Tally {
  chars = 0;
  tokens = 0;
}

/** An image or document block as an attachment (a source of unknown kind counts as a URL). */
function blockAttachment(block: Json, source: Json): Attachment {
  const kind = block.type === "image" ? "image" : "document";
  if (source.type === "base64" && typeof source.data === "string") {
    const mediaType = typeof source.media_type === "string" ? source.media_type : PDF;
    return { kind, mediaType, source: { type: "base64", data: source.data } };
  }
  const url = source.type === "url" && typeof source.url === "string" ? source.url : "";
  return { kind, mediaType: kind === "document" ? PDF : "", source: { type: "url", url } };
}

/** Counts one image or document block; a text document counts its text; no source, nothing. */
function countAttachment(block: Json, tally: Tally): void {
  const source = block.source;
  if (!isObject(source)) return;
  if (block.type === "document" && source.type === "text") {
    tally.chars += typeof source.data === "string" ? source.data.length : 0;
  } else if (block.type === "document" && source.type === "content") {
    addContent(source.content, tally);
  } else {
    tally.tokens += attachmentTokens(blockAttachment(block, source));
  }
}

/** Counts one content block (or a bare string); unknown block kinds count their text. */
function addBlock(block: unknown, tally: Tally): void {
  if (typeof block === "string") {
    tally.chars += block.length;
    return;
  }
  if (!isObject(block)) return;
  switch (block.type) {
    case "image":
    case "document":
      countAttachment(block, tally);
      return;
    case "tool_use":
      tally.chars += jsonLength(block.input);
      return;
    case "tool_result":
      addContent(block.content, tally);
      return;
    case "thinking":
    case "redacted_thinking":
      // Earlier turns' thinking is not part of the model's input.
      return;
    default:
      tally.chars += typeof block.text === "string" ? block.text.length : 0;
  }
}

/** Counts a `content` / `system` value: a string or an array of blocks. */
function addContent(content: unknown, tally: Tally): void {
  if (typeof content === "string") tally.chars += content.length;
  else if (Array.isArray(content)) { for (const block of content) addBlock(block, tally); }
}

function toolChars(tool: unknown): number {
  if (!isObject(tool)) return 0;
  const name = typeof tool.name === "string" ? tool.name.length : 0;
  const description = typeof tool.description === "string" ? tool.description.length : 0;
  return name + description + jsonLength(tool.input_schema);
}

/**
 * Estimates the input tokens of a parsed Messages request body. A body that is not a Messages
 * request (not an object, no `messages` array) gives 0.
 */
export function countTokens(body: unknown): number {
  if (!isObject(body) || !Array.isArray(body.messages)) return 0;
  const tally = new Tally();
  addContent(body.system, tally);
  for (const message of body.messages) {
    if (isObject(message)) addContent(message.content, tally);
  }
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) tally.chars += toolChars(tool);
  }
  return Math.ceil(tally.chars / CHARS_PER_TOKEN) + tally.tokens;
}
