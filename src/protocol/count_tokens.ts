/**
 * The token estimate of `POST /v1/messages/count_tokens` (SPEC §2.2, §4.3, §8): about
 * ceil(characters / 4) over the system prompt, every message's text, tool_use inputs,
 * tool_result contents and the tool definitions. An estimate, not a tokenizer.
 */

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

/** Characters of one content block (or a bare string); unknown block kinds count their text. */
function blockChars(block: unknown): number {
  if (typeof block === "string") return block.length;
  if (!isObject(block)) return 0;
  switch (block.type) {
    case "tool_use":
      return jsonLength(block.input);
    case "tool_result":
      return contentChars(block.content);
    case "thinking":
    case "redacted_thinking":
      // Earlier turns' thinking is not part of the model's input.
      return 0;
    default:
      return typeof block.text === "string" ? block.text.length : 0;
  }
}

/** Characters of a `content` / `system` value: a string or an array of blocks. */
function contentChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const block of content) total += blockChars(block);
  return total;
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
  let chars = contentChars(body.system);
  for (const message of body.messages) {
    if (isObject(message)) chars += contentChars(message.content);
  }
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) chars += toolChars(tool);
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
