/**
 * Responses objects: the `response` (JSON reply and stream snapshots), its output items and
 * usage (errors: ../error_envelope.ts).
 */
import type { Outcome, TurnUsage } from "../../council/types.ts";
import { estimateTokens, outputTokensOf } from "../usage.ts";

interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

interface OutputText {
  type: "output_text";
  text: string;
  annotations: never[];
}

interface MessageItem {
  id: string;
  type: "message";
  role: "assistant";
  status: "in_progress" | "completed";
  content: OutputText[];
}

export interface ReasoningItem {
  id: string;
  type: "reasoning";
  summary: { type: "summary_text"; text: string }[];
  encrypted_content?: string | null;
}

export type OutputItem = MessageItem | ReasoningItem;

type ResponseStatus = "in_progress" | "completed" | "failed";

/** What every response snapshot of one request shares. */
export interface ResponseHead {
  id: string;
  model: string;
  /** Unix seconds. */
  createdAt: number;
  instructions: string | null;
}

export function responsesUsage(inputTokens: number, outputTokens: number): ResponsesUsage {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

export function outputText(text: string): OutputText {
  return { type: "output_text", text, annotations: [] };
}

export function messageItem(id: string, text: string, status: MessageItem["status"]): MessageItem {
  return {
    id,
    type: "message",
    role: "assistant",
    status,
    content: status === "in_progress" ? [] : [outputText(text)],
  };
}

/**
 * The answer text of an outcome. This protocol runs with no tools, so a tool outcome is a
 * council defect; it is shown as text rather than ever becoming a function_call.
 */
export function answerText(outcome: Outcome): string {
  return outcome.kind === "answer"
    ? outcome.text
    : `The council proposed a tool call this protocol cannot carry: ${outcome.name} ${
      JSON.stringify(outcome.input)
    }`;
}

/** Output tokens of the answer this protocol renders for an outcome. */
export function answerTokens(outcome: Outcome, usage: TurnUsage | undefined): number {
  return outcome.kind === "answer"
    ? outputTokensOf(outcome, usage)
    : estimateTokens(answerText(outcome));
}

/** A full `response` object (the usual null fields included). */
export function responseObject(
  head: ResponseHead,
  status: ResponseStatus,
  output: OutputItem[],
  usage: ResponsesUsage | null,
  error: { code: string; message: string } | null = null,
) {
  return {
    id: head.id,
    object: "response" as const,
    created_at: head.createdAt,
    status,
    model: head.model,
    output,
    usage,
    error,
    incomplete_details: null,
    instructions: head.instructions,
    metadata: {},
    parallel_tool_calls: false,
    tool_choice: "auto" as const,
    tools: [],
    temperature: null,
    top_p: null,
    max_output_tokens: null,
    previous_response_id: null,
    reasoning: null,
    store: false,
    text: { format: { type: "text" as const } },
    truncation: "disabled" as const,
  };
}
