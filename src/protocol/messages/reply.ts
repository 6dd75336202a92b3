/**
 * Non-streaming Messages replies: the assistant message for an outcome (errors:
 * ../error_envelope.ts).
 */
import type { Outcome } from "../../council/types.ts";
import { newId } from "../ids.ts";

interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

type StopReason = "end_turn" | "tool_use";

type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

interface MessagesReply {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ReplyBlock[];
  stop_reason: StopReason;
  stop_sequence: null;
  usage: MessagesUsage;
}

export function messagesUsage(inputTokens: number, outputTokens: number): MessagesUsage {
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

export function stopReasonOf(outcome: Outcome): StopReason {
  return outcome.kind === "tool" ? "tool_use" : "end_turn";
}

/** The one content block an outcome becomes (a tool call under `toolUseId` when given). */
export function outcomeBlock(outcome: Outcome, toolUseId?: string): ReplyBlock {
  return outcome.kind === "tool"
    ? {
      type: "tool_use",
      id: toolUseId ?? newId("toolu_"),
      name: outcome.name,
      input: outcome.input,
    }
    : { type: "text", text: outcome.text };
}

/** The whole assistant message for a finished turn (model = what the host asked for). */
export function messagesReply(
  model: string,
  outcome: Outcome,
  usage: { inputTokens: number; outputTokens: number },
  toolUseId?: string,
): MessagesReply {
  return {
    id: newId("msg_"),
    type: "message",
    role: "assistant",
    model,
    content: [outcomeBlock(outcome, toolUseId)],
    stop_reason: stopReasonOf(outcome),
    stop_sequence: null,
    usage: messagesUsage(usage.inputTokens, usage.outputTokens),
  };
}
