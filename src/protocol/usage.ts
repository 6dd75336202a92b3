/**
 * Token estimates for the usage every reply must carry (clients crash without it; a zero
 * `input_tokens` breaks Claude Code's context meter).
 */
import type { Outcome, TurnInput, TurnUsage } from "../council/types.ts";
import { attachmentTokens } from "./attachment_tokens.ts";

/** About one token per four characters (CONTRACT.md §8); never 0 for non-empty text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The prompt as text: system, transcript and declared tools, in the order a model reads them. */
function promptText(input: TurnInput): string {
  const parts: string[] = [input.system];
  for (const entry of input.transcript) {
    switch (entry.kind) {
      case "tool_call":
        parts.push(`${entry.name} ${JSON.stringify(entry.input)}`);
        break;
      default:
        parts.push(entry.text);
    }
  }
  for (const tool of input.tools) {
    parts.push(`${tool.name} ${tool.description} ${JSON.stringify(tool.inputSchema)}`);
  }
  return parts.filter((part) => part.length > 0).join("\n");
}

/** Tokens of the transcript's images and documents (attachment_tokens.ts). */
function attachmentsTokens(input: TurnInput): number {
  let tokens = 0;
  for (const entry of input.transcript) {
    if (entry.kind !== "user" && entry.kind !== "tool_result") continue;
    for (const attachment of entry.attachments ?? []) tokens += attachmentTokens(attachment);
  }
  return tokens;
}

/**
 * Input tokens reported to the host: the size of the host's own prompt, images and documents
 * counted as count_tokens counts them. (The council's children read more than that, but hosts
 * use this number as their context meter.) At least 1: a zero breaks Claude Code's meter.
 */
export function inputTokensOf(input: TurnInput): number {
  return Math.max(1, estimateTokens(promptText(input)) + attachmentsTokens(input));
}

/** The outcome as the text a model would have produced. */
function outcomeText(outcome: Outcome): string {
  return outcome.kind === "answer" ? outcome.text : JSON.stringify(outcome.input);
}

/** Output tokens: what the council reported, else an estimate of the outcome. */
export function outputTokensOf(outcome: Outcome, usage: TurnUsage | undefined): number {
  if (usage && usage.outputTokens > 0) return Math.round(usage.outputTokens);
  return estimateTokens(outcomeText(outcome));
}
