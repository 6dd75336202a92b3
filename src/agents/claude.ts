/**
 * Claude Code adapter: `claude -p --output-format stream-json …` argv, and its NDJSON parser.
 */
import type { Adapter, ParsedLine, ParserContext } from "./types.ts";
import {
  describeToolCall,
  numberField,
  objectField,
  parseJsonLine,
  stringField,
} from "./activity.ts";
import { oneLine } from "../text.ts";
import { type FlagSpec, hasFlag, withoutFlags } from "./flags.ts";
import { anthropicBlocks } from "./anthropic_blocks.ts";

/** Flags that already choose a permission mode; then ours is not added. */
const PERMISSION_FLAGS = ["--dangerously-skip-permissions", "--permission-mode"];
/** What a read-only run removes from the agent's args, so plan mode cannot be undone. */
const WRITE_ENABLING_FLAGS: FlagSpec[] = [
  { flag: "--dangerously-skip-permissions", takesValue: false },
  { flag: "--allow-dangerously-skip-permissions", takesValue: false },
  { flag: "--permission-mode", takesValue: true },
];

/** Input tokens of an Anthropic usage object, cache reads and writes included. */
function inputTokensOf(usage: Record<string, unknown>): number {
  return (numberField(usage, "input_tokens") ?? 0) +
    (numberField(usage, "cache_creation_input_tokens") ?? 0) +
    (numberField(usage, "cache_read_input_tokens") ?? 0);
}

/**
 * A parser for one run. Text comes live from `stream_event` text deltas; when a run has none
 * (no --include-partial-messages), from the `assistant` text blocks instead, never both. The
 * `result` line's text is the final answer. Subagent lines (parent_tool_use_id set) add
 * activity only.
 */
export function createClaudeParser(context: ParserContext = {}): (line: string) => ParsedLine[] {
  let sawDelta = false;
  let wroteText = false;
  let separatorDue = false;
  // Per-message token counts while streaming; `result.usage` replaces them at the end.
  const messages = new Map<string, { input: number; output: number }>();
  let currentMessage = "";

  const text = (piece: string): ParsedLine[] => {
    if (!piece) return [];
    const out = separatorDue ? `\n\n${piece}` : piece;
    separatorDue = false;
    wroteText = true;
    return [{ type: "text", text: out }];
  };
  const runningUsage = (): ParsedLine => {
    let input = 0;
    let output = 0;
    for (const m of messages.values()) {
      input += m.input;
      output += m.output;
    }
    return { type: "usage", inputTokens: input, outputTokens: output };
  };

  const streamEvent = (event: Record<string, unknown>): ParsedLine[] => {
    switch (event.type) {
      case "message_start": {
        const message = objectField(event, "message");
        const usage = objectField(message, "usage");
        currentMessage = stringField(message, "id") ?? `message-${messages.size}`;
        messages.set(currentMessage, {
          input: usage ? inputTokensOf(usage) : 0,
          output: numberField(usage, "output_tokens") ?? 0,
        });
        return [runningUsage()];
      }
      case "content_block_start":
        if (objectField(event, "content_block")?.type === "text" && wroteText) separatorDue = true;
        return [];
      case "content_block_delta": {
        const delta = objectField(event, "delta");
        if (delta?.type !== "text_delta") return [];
        sawDelta = true;
        return text(stringField(delta, "text") ?? "");
      }
      case "message_delta": {
        const usage = objectField(event, "usage");
        const entry = messages.get(currentMessage);
        if (!usage || !entry) return [];
        entry.output = numberField(usage, "output_tokens") ?? entry.output;
        return [runningUsage()];
      }
      default:
        return [];
    }
  };

  const assistant = (line: Record<string, unknown>): ParsedLine[] => {
    const message = objectField(line, "message");
    // Subagents' text is not the answer; "<synthetic>" messages are the CLI's own error notes.
    const ownText = line.parent_tool_use_id == null && message?.model !== "<synthetic>";
    const content = message?.content;
    if (!Array.isArray(content)) return [];
    const out: ParsedLine[] = [];
    for (const block of content) {
      if (block?.type === "tool_use" && typeof block.name === "string") {
        out.push({
          type: "activity",
          text: describeToolCall(block.name, block.input, context.cwd),
        });
      } else if (block?.type === "text" && ownText && !sawDelta) {
        if (wroteText) separatorDue = true;
        out.push(...text(stringField(block, "text") ?? ""));
      }
    }
    return out;
  };

  const result = (line: Record<string, unknown>): ParsedLine[] => {
    const out: ParsedLine[] = [];
    const usage = objectField(line, "usage");
    const cost = numberField(line, "total_cost_usd");
    if (usage || cost !== undefined) {
      out.push({
        type: "usage",
        ...(usage ? { inputTokens: inputTokensOf(usage) } : {}),
        ...(usage ? { outputTokens: numberField(usage, "output_tokens") ?? 0 } : {}),
        ...(cost !== undefined ? { costUsd: cost } : {}),
      });
    }
    const answer = stringField(line, "result");
    const subtype = stringField(line, "subtype") ?? "";
    let error: string | undefined;
    if (line.is_error === true) {
      error = oneLine(answer || subtype || "is_error result", 300);
    } else if (subtype.startsWith("error")) {
      const errors = Array.isArray(line.errors) ? line.errors.map(String).join("; ") : "";
      error = oneLine(errors ? `${subtype}: ${errors}` : subtype, 300);
    }
    out.push({ type: "final", ...(answer !== undefined ? { text: answer } : {}), error });
    return out;
  };

  return (raw) => {
    const line = parseJsonLine(raw);
    if (line === "blank") return [];
    if (line === "invalid") return [{ type: "invalid", line: raw }];
    switch (line.type) {
      case "stream_event": {
        const event = objectField(line, "event");
        return event && line.parent_tool_use_id == null ? streamEvent(event) : [];
      }
      case "assistant":
        return assistant(line);
      case "system":
        if (line.subtype === "api_retry") {
          const status = numberField(line, "error_status") ?? stringField(line, "error") ?? "";
          return [{
            type: "activity",
            text: `API retry ${numberField(line, "attempt") ?? "?"}/${
              numberField(line, "max_retries") ?? "?"
            } (${status})`,
          }];
        }
        return [];
      case "result":
        return result(line);
      default:
        return [];
    }
  };
}

export const claudeAdapter: Adapter = {
  defaultCommand: "claude",
  stdout: "jsonl",
  argv(agent, { role, model, delivery, access }) {
    const args = [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--model",
      model,
      // Children are one-shot: keep thousands of runs out of the user's session history.
      "--no-session-persistence",
    ];
    // Images and documents go in as content blocks of a stream-json user message (stdin).
    if (delivery) args.push("--input-format", "stream-json");
    // Read-only is plan mode: it refuses Write/Edit and shell writes, while Read, Grep and
    // read-only commands still run.
    const own = access === "read-only"
      ? withoutFlags(agent.args, WRITE_ENABLING_FLAGS)
      : agent.args;
    if (access === "read-only") args.push("--permission-mode", "plan");
    else if (!hasFlag(own, PERMISSION_FLAGS)) args.push("--dangerously-skip-permissions");
    // The fan-out judge only answers a yes/no question: no tools, so it stays fast and cheap.
    if (role === "judge" && !hasFlag(own, ["--tools"])) args.push("--tools", "");
    return [...args, ...own];
  },
  stdin: (prompt, { attachments }) =>
    JSON.stringify({
      type: "user",
      message: { role: "user", content: anthropicBlocks(prompt, attachments) },
    }) + "\n",
  env: ({ isRoot }): Record<string, string> => (isRoot ? { IS_SANDBOX: "1" } : {}),
  createParser: createClaudeParser,
};
