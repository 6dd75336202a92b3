/**
 * Claude Code adapter: `claude -p --output-format stream-json …` argv, and its NDJSON parser.
 */
import type { Adapter, ParsedLine, ParserContext } from "../types.ts";
import {
  describeToolCall,
  numberField,
  objectField,
  parseJsonLine,
  stringField,
} from "./activity.ts";
import { oneLine } from "../../base/text.ts";
import { type FlagSpec, hasFlag, withoutFlags } from "./flags.ts";
import { claudeInputLine } from "./claude_input.ts";

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

/** The cache reads and writes of a usage object (both are part of the input tokens). */
function cacheTokensOf(usage: Record<string, unknown>) {
  const read = numberField(usage, "cache_read_input_tokens");
  const write = numberField(usage, "cache_creation_input_tokens");
  return {
    ...(read !== undefined ? { cacheReadTokens: read } : {}),
    ...(write !== undefined ? { cacheWriteTokens: write } : {}),
  };
}

/** What a run's parser remembers between lines. */
interface RunState {
  /** Text came as stream-event deltas: the `assistant` lines' text blocks repeat it. */
  sawDelta: boolean;
  wroteText: boolean;
  /** The next text starts a new text block: set apart from earlier text. */
  separatorDue: boolean;
  /** Per-message token counts while streaming; `result.usage` replaces them at the end. */
  messages: Map<string, { input: number; output: number }>;
  currentMessage: string;
}

/** A piece of the run's text, set apart from earlier text when a new block began. */
function textItems(state: RunState, piece: string): ParsedLine[] {
  if (!piece) return [];
  const out = state.separatorDue ? `\n\n${piece}` : piece;
  state.separatorDue = false;
  state.wroteText = true;
  return [{ type: "text", text: out }];
}

/** The tokens of every message so far. */
function runningUsage(state: RunState): ParsedLine {
  let input = 0;
  let output = 0;
  for (const m of state.messages.values()) {
    input += m.input;
    output += m.output;
  }
  return { type: "usage", inputTokens: input, outputTokens: output };
}

/** One `stream_event` of the main agent: text deltas, block starts and token counts. */
function streamEventItems(state: RunState, event: Record<string, unknown>): ParsedLine[] {
  switch (event.type) {
    case "message_start": {
      const message = objectField(event, "message");
      const usage = objectField(message, "usage");
      state.currentMessage = stringField(message, "id") ?? `message-${state.messages.size}`;
      state.messages.set(state.currentMessage, {
        input: usage ? inputTokensOf(usage) : 0,
        output: numberField(usage, "output_tokens") ?? 0,
      });
      return [runningUsage(state)];
    }
    case "content_block_start":
      if (objectField(event, "content_block")?.type === "text" && state.wroteText) {
        state.separatorDue = true;
      }
      return [];
    case "content_block_delta": {
      const delta = objectField(event, "delta");
      if (delta?.type !== "text_delta") return [];
      state.sawDelta = true;
      return textItems(state, stringField(delta, "text") ?? "");
    }
    case "message_delta": {
      const usage = objectField(event, "usage");
      const entry = state.messages.get(state.currentMessage);
      if (!usage || !entry) return [];
      entry.output = numberField(usage, "output_tokens") ?? entry.output;
      return [runningUsage(state)];
    }
    default:
      return [];
  }
}

/** An `assistant` line: its tool uses as activity, its text when no deltas carried it. */
function assistantItems(
  state: RunState,
  line: Record<string, unknown>,
  cwd: string | undefined,
): ParsedLine[] {
  const message = objectField(line, "message");
  // Subagents' text is not the answer; "<synthetic>" messages are the CLI's own error notes.
  const ownText = line.parent_tool_use_id == null && message?.model !== "<synthetic>";
  const content = message?.content;
  if (!Array.isArray(content)) return [];
  const out: ParsedLine[] = [];
  for (const block of content) {
    if (block?.type === "tool_use" && typeof block.name === "string") {
      out.push({ type: "activity", text: describeToolCall(block.name, block.input, cwd) });
    } else if (block?.type === "text" && ownText && !state.sawDelta) {
      if (state.wroteText) state.separatorDue = true;
      out.push(...textItems(state, stringField(block, "text") ?? ""));
    }
  }
  return out;
}

/** The `result` line: the run's usage and cost, and its final answer or error. */
function resultItems(line: Record<string, unknown>): ParsedLine[] {
  const out: ParsedLine[] = [];
  const usage = objectField(line, "usage");
  const cost = numberField(line, "total_cost_usd");
  if (usage || cost !== undefined) {
    out.push({
      type: "usage",
      ...(usage ? { inputTokens: inputTokensOf(usage) } : {}),
      ...(usage ? { outputTokens: numberField(usage, "output_tokens") ?? 0 } : {}),
      ...(usage ? cacheTokensOf(usage) : {}),
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
}

/** A `system` line: an API retry is a retry; the others say nothing of the run. */
function systemItems(line: Record<string, unknown>): ParsedLine[] {
  return line.subtype === "api_retry" ? [apiRetry(line)] : [];
}

/**
 * A parser for one run. Text comes live from `stream_event` text deltas; when a run has none
 * (no --include-partial-messages), from the `assistant` text blocks instead, never both. The
 * `result` line's text is the final answer. Subagent lines (parent_tool_use_id set) add
 * activity only.
 */
export function createClaudeParser(context: ParserContext = {}): (line: string) => ParsedLine[] {
  const state: RunState = {
    sawDelta: false,
    wroteText: false,
    separatorDue: false,
    messages: new Map(),
    currentMessage: "",
  };
  return (raw) => {
    const line = parseJsonLine(raw);
    if (line === "blank") return [];
    if (line === "invalid") return [{ type: "invalid", line: raw }];
    switch (line.type) {
      case "stream_event": {
        const event = objectField(line, "event");
        return event && line.parent_tool_use_id == null ? streamEventItems(state, event) : [];
      }
      case "assistant":
        return assistantItems(state, line, context.cwd);
      case "system":
        return systemItems(line);
      case "result":
        return resultItems(line);
      default:
        return [];
    }
  };
}

/** `{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"error_status":529,…}` */
function apiRetry(line: Record<string, unknown>): ParsedLine {
  const status = numberField(line, "error_status");
  const error = stringField(line, "error");
  const reason = [status, error].filter((part) => part !== undefined).join(" ");
  const attempt = numberField(line, "attempt");
  const maxAttempts = numberField(line, "max_retries");
  return {
    type: "retry",
    ...(attempt !== undefined ? { attempt } : {}),
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    ...(reason ? { reason: oneLine(reason, 200) } : {}),
  };
}

export const claudeAdapter: Adapter = {
  defaultCommand: "claude",
  defaultModel: "opus",
  versionArgs: ["--version"],
  overheadTokens: 30_000,
  family: {
    models: /claude|anthropic|haiku|sonnet|opus/i,
    cheapModel: "haiku",
    api: "anthropic",
  },
  waitsForPrompt: true,
  usesTools: true,
  stdout: "jsonl",
  argv(agent, { role, model, access }) {
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
    // Read-only is plan mode: it refuses Write/Edit and shell writes, while Read, Grep and
    // read-only commands still run.
    const own = access === "read-only"
      ? withoutFlags(agent.args, WRITE_ENABLING_FLAGS)
      : agent.args;
    // The fan-out judge only answers a yes/no question: no built-in tools and no MCP servers,
    // so it stays fast and cheap. With none at all there is nothing to confine, and it skips
    // plan mode, which would run the `haiku` alias as Sonnet (Claude Code's plan upgrade).
    const judge = role === "judge";
    const toolless = judge && !hasFlag(own, ["--tools", "--mcp-config"]);
    if (access === "read-only") {
      if (!toolless) args.push("--permission-mode", "plan");
    } else if (!hasFlag(own, PERMISSION_FLAGS)) args.push("--dangerously-skip-permissions");
    if (judge && !hasFlag(own, ["--tools"])) args.push("--tools", "");
    if (toolless && !hasFlag(own, ["--strict-mcp-config"])) args.push("--strict-mcp-config");
    // The prompt (with any images and documents) arrives as a stream-json user message, in
    // blocks Anthropic's prompt cache can reuse from turn to turn.
    if (!hasFlag(own, ["--input-format"])) args.push("--input-format", "stream-json");
    return [...args, ...own];
  },
  structuredStdin(agent, prompt, delivery) {
    const at = agent.args.indexOf("--input-format");
    if (at >= 0 && agent.args[at + 1] !== "stream-json") return undefined;
    return claudeInputLine(prompt, delivery?.attachments);
  },
  env: ({ isRoot }): Record<string, string> => (isRoot ? { IS_SANDBOX: "1" } : {}),
  // Claude Code gives up on a stdin that stays silent for 3 s; once a byte came, it waits.
  stdinPrimer: "\n",
  createParser: createClaudeParser,
};
