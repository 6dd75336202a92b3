/**
 * Housekeeping requests in the shapes the real hosts send (headers and bodies as captured from
 * Claude Code 2.1.330 / 2.1.197 and Codex 0.169 against a recording stub), with our own texts.
 */
import { CLAUDE_SYSTEM, CLAUDE_TOOLS, claudeBody, codexInput } from "./host_bodies.ts";

/** A request as the test posts it: headers and JSON body. */
export interface HostRequest {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export const CLAUDE_SESSION = "7d0c2b1e-0000-4000-8000-00000000c1a0";
export const CODEX_THREAD = "01a2b3c4-0000-7000-8000-00000000c0de";

/** Headers Claude Code sends on every request; hint headers only with the gateway hint switch. */
export function claudeHeaders(requestClass?: string, session = CLAUDE_SESSION) {
  return {
    "anthropic-version": "2023-06-01",
    "x-app": "cli",
    "user-agent": "claude-cli/2.1.330 (external, cli)",
    "x-claude-code-session-id": session,
    ...(requestClass ? { "x-claude-code-request-class": requestClass } : {}),
  };
}

const TITLE_SCHEMA = {
  type: "json_schema",
  schema: {
    type: "object",
    properties: { title: { type: "string" } },
    required: ["title"],
    additionalProperties: false,
  },
};

/**
 * Claude Code's session-title request: no tools, a title instruction in the system prompt, the
 * user's prompt wrapped in `<session>`, a JSON schema with one `title` field.
 */
export function claudeTitle(prompt: string, options: { hint?: boolean; old?: boolean } = {}) {
  const body = {
    model: options.old ? "claude-opus-4-8" : "claude-opus-5-5",
    max_tokens: options.old ? 64000 : 128000,
    system: [
      CLAUDE_SYSTEM[0],
      { type: "text", text: "You are the command-line coding assistant." },
      {
        type: "text",
        text: "Pick a title for this coding session, three to six words, so it can be found " +
          "again in a list. Reply with the title only.",
      },
    ],
    messages: [{
      role: "user",
      content: [{
        type: "text",
        text: `<session>\n${prompt}\n</session>\n\nUse the language the session is written in.`,
      }],
    }],
    ...(options.old ? { tools: [], thinking: { type: "disabled" } } : {}),
    metadata: {
      user_id: JSON.stringify({ device_id: "d", account_uuid: "", session_id: CLAUDE_SESSION }),
    },
    output_config: { effort: "medium", format: TITLE_SCHEMA },
    stream: true,
  };
  return { headers: claudeHeaders(options.hint ? "auxiliary" : undefined), body };
}

/** Claude Code's main request (2.1.330 shape, with tools), optionally with the hint header. */
export function claudeMain(ask: string, hint = false): HostRequest {
  return {
    headers: claudeHeaders(hint ? "main" : undefined),
    body: claudeBody([{ role: "user", content: [{ type: "text", text: ask }] }], {
      model: "claude-opus-5-5",
    }),
  };
}

/**
 * Claude Code 2.1.330's compaction: the whole conversation, the tools still declared, and a
 * last user message forbidding tools and asking for a summary.
 */
export function claudeCompaction(hint: boolean): HostRequest {
  const messages = [
    { role: "user", content: [{ type: "text", text: "How do I rotate the log files?" }] },
    { role: "assistant", content: [{ type: "text", text: "Use logrotate with a daily rule." }] },
    {
      role: "user",
      content: "Answer in plain text only and do not call any tools. Write a summary of the " +
        "conversation so far: what was asked, what was decided, what is still open.",
    },
  ];
  return {
    headers: {
      ...claudeHeaders(hint ? "compaction" : undefined),
      ...(hint ? { "x-claude-code-compaction": "manual" } : {}),
    },
    body: claudeBody(messages, { model: "claude-opus-5-5", tools: CLAUDE_TOOLS }),
  };
}

/** Codex's turn metadata header value. */
export function codexMetadata(threadSource: string, requestKind = "turn", thread = CODEX_THREAD) {
  return JSON.stringify({
    session_id: thread,
    thread_id: thread,
    turn_id: "01a2b3c4-0000-7000-8000-0000000000aa",
    request_kind: requestKind,
    history_initialization: "new",
    thread_source: threadSource,
    sandbox: "seccomp",
    model: "gpt-6-sol",
  });
}

export function codexHeaders(threadSource?: string, thread = CODEX_THREAD) {
  return {
    originator: "codex-tui",
    "user-agent": "codex-tui/0.169.0 (Linux; x86_64) (codex-tui; 0.169.0)",
    "session-id": thread,
    "thread-id": thread,
    ...(threadSource ? { "x-codex-turn-metadata": codexMetadata(threadSource) } : {}),
  };
}

/** Codex's default model's code-mode tools: an `additional_tools` item instead of `tools`. */
export const CODEX_ADDITIONAL_TOOLS = {
  type: "additional_tools",
  role: "developer",
  tools: [
    { type: "namespace", name: "functions", tools: [{ type: "custom", name: "exec" }] },
    { type: "function", name: "clock" },
    { type: "function", name: "collaboration" },
  ],
};

/** A request in the shape the default model (gpt-6-sol) brings: no `tools` key. */
export function codexSolBody(input: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: "gpt-6-sol",
    stream: true,
    input: [CODEX_ADDITIONAL_TOOLS, ...input],
    tool_choice: "auto",
    parallel_tool_calls: false,
    reasoning: { effort: "medium", context: "all_turns" },
    store: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: CODEX_THREAD,
    text: { verbosity: "low" },
    ...extra,
  };
}

/** Codex's title thread: its own thread, a title ask as the user message, a title schema. */
export function codexTitle(prompt: string, metadata = true): HostRequest {
  const input = codexInput(
    `Write a short title, at most five words, for a task that starts with: ${prompt}`,
  );
  return {
    headers: codexHeaders(metadata ? "thread_title" : undefined),
    body: codexSolBody(input, {
      text: {
        verbosity: "low",
        format: { ...TITLE_SCHEMA, strict: true, name: "codex_output_schema" },
      },
    }),
  };
}

/** Codex's main turn on the default model (thread source `user`). */
export function codexMain(ask: string, extra: Record<string, unknown> = {}): HostRequest {
  return { headers: codexHeaders("user"), body: codexSolBody(codexInput(ask), extra) };
}
