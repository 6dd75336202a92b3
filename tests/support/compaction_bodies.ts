/**
 * Compaction requests in the shapes Claude Code 2.1.332 and Codex 0.171.0 sent to a recording
 * stub (headers, body keys, where the ask sits), shortened, with our own texts.
 */
import { CLAUDE_TOOLS, claudeBody, codexInput } from "./host_bodies.ts";
import { CLAUDE_SESSION, CODEX_THREAD, type HostRequest } from "./housekeeping_bodies.ts";

/** How a host started the compaction: the user's command, or its own context limit. */
export type Trigger = "manual" | "auto";

const CLAUDE_HISTORY = [
  { role: "user", content: [{ type: "text", text: "Which port does the test server use?" }] },
  { role: "assistant", content: [{ type: "text", text: "It binds port 0 and prints the port." }] },
];

/** Our stand-in for Claude Code's compaction ask: no tools, a summary of the conversation. */
export const CLAUDE_COMPACTION_ASK = "Plain text only: do not call any tools. Write a summary " +
  "of the conversation so far in an <analysis> block and a <summary> block.";

/**
 * Claude Code 2.1.332's compaction (`/compact` is `manual`, the context limit `auto`): the
 * whole conversation, its tools still declared, the ask as a plain-string last user message.
 * With the gateway hint switch it carries its request class and trigger; without it, neither.
 */
export function claudeCompaction332(trigger: Trigger, hints: boolean): HostRequest {
  const headers: Record<string, string> = {
    "anthropic-version": "2023-06-01",
    "user-agent": "claude-cli/2.1.332 (external, sdk-cli)",
    "x-claude-code-session-id": CLAUDE_SESSION,
  };
  if (hints) {
    headers["x-claude-code-request-class"] = "compaction";
    headers["x-claude-code-compaction"] = trigger;
  }
  const messages = [...CLAUDE_HISTORY, { role: "user", content: CLAUDE_COMPACTION_ASK }];
  return {
    headers,
    body: claudeBody(messages, {
      model: "claude-council",
      tools: CLAUDE_TOOLS,
      max_tokens: 32000,
      thinking: { type: "adaptive", display: "omitted" },
    }),
  };
}

/** The marker phrase Codex's compaction ask opens with, then our own words. */
export const CODEX_COMPACTION_ASK = "You are performing a CONTEXT CHECKPOINT COMPACTION. " +
  "Hand the task over: what is done, what was decided, what is left.";

/** Codex 0.171.0's turn metadata for a compaction (0.169.0 sends the same keys). */
function codexCompactionMetadata(labelled: boolean): string {
  return JSON.stringify({
    session_id: CODEX_THREAD,
    thread_id: CODEX_THREAD,
    turn_id: "01a2b3c4-0000-7000-8000-0000000000bb",
    ...(labelled ? { request_kind: "compaction" } : {}),
    history_initialization: "cold_resume",
    thread_source: "user",
    turn_trigger: "exec",
    sandbox: "seccomp",
    ...(labelled
      ? { compaction: { trigger: "auto", reason: "context_limit", phase: "pre_turn" } }
      : {}),
  });
}

/**
 * Codex 0.171.0's compaction for a custom provider: an ordinary Responses request with the
 * history, the checkpoint ask as the last user message, and `tools: []`. `labelled` puts
 * `request_kind: "compaction"` in the turn metadata (leaving it out keeps `thread_source`).
 */
export function codexCompaction171(labelled: boolean): HostRequest {
  const history = codexInput("Rename the config loader and keep its tests green.");
  const answer = {
    type: "message",
    role: "assistant",
    content: [{ type: "output_text", text: "Renamed it; the tests pass." }],
  };
  const ask = {
    type: "message",
    role: "user",
    content: [{ type: "input_text", text: CODEX_COMPACTION_ASK }],
  };
  return {
    headers: {
      originator: "codex_exec",
      "user-agent": "codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)",
      "session-id": CODEX_THREAD,
      "x-codex-turn-metadata": codexCompactionMetadata(labelled),
    },
    body: {
      model: "gpt-5.5",
      stream: true,
      input: [...history, answer, ask],
      tools: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: { effort: "medium" },
      store: false,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: CODEX_THREAD,
    },
  };
}
