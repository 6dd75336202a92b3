/**
 * Request bodies in the shapes the real hosts send (field for field as recorded from Claude Code
 * 2.1.x and Codex 0.169), with our own short texts.
 */

export const CWD = "/tmp";

const READ_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    file_path: { type: "string", description: "Absolute path of the file" },
    limit: { type: "integer", exclusiveMinimum: 0 },
  },
  required: ["file_path"],
  additionalProperties: false,
};

export const CLAUDE_TOOLS = [
  { name: "Read", description: "Reads a file.", input_schema: READ_SCHEMA },
  {
    name: "Bash",
    description: "Runs a shell command.",
    input_schema: {
      type: "object",
      properties: { command: { type: "string" }, timeout: { type: "number" } },
      required: ["command"],
    },
  },
];

export const CLAUDE_SYSTEM = [
  {
    type: "text",
    text: "x-anthropic-billing-header: cc_version=9.9.9.abc; cc_entrypoint=sdk-cli;",
  },
  { type: "text", text: "You are a test agent.", cache_control: { type: "ephemeral" } },
  {
    type: "text",
    text:
      `\nHelp with code.\n\n# Environment\nYou have been invoked in the following environment: \n - Primary working directory: ${CWD}\n - Platform: linux\n`,
    cache_control: { type: "ephemeral" },
  },
];

const REMINDER = "<system-reminder>\nToday's date is 2030-01-01.\n</system-reminder>\n";

/** The first user message as Claude Code sends it: a reminder block, then the ask. */
export function claudeFirstUser(ask: string) {
  return {
    role: "user",
    content: [
      { type: "text", text: REMINDER },
      { type: "text", text: ask, cache_control: { type: "ephemeral" } },
    ],
  };
}

/** The mid-conversation system message (mid-conversation-system beta). */
export const CLAUDE_SYSTEM_MESSAGE = {
  role: "system",
  content: "Agent types available to the Agent tool: explorer (read-only).",
};

/** A Claude Code request body with every top-level field it sends. */
export function claudeBody(messages: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: "claude-opus-4-8",
    messages,
    system: CLAUDE_SYSTEM,
    tools: CLAUDE_TOOLS,
    metadata: {
      user_id: JSON.stringify({ device_id: "d", account_uuid: "", session_id: "s" }),
    },
    max_tokens: 64000,
    thinking: { type: "adaptive" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    output_config: { effort: "high" },
    stream: true,
    ...extra,
  };
}

/** A first-turn Claude Code body: reminder + ask, then the system-role message. */
export function claudeAsk(ask: string, extra: Record<string, unknown> = {}) {
  return claudeBody([claudeFirstUser(ask), CLAUDE_SYSTEM_MESSAGE], extra);
}

/**
 * A first-turn body in the shape of Claude Code 2.1.330: the environment block is not in
 * `system` but in a `role: "system"` message (text blocks) after the first user message.
 */
export function claude330Ask(ask: string, cwd = CWD) {
  const system = CLAUDE_SYSTEM.map((block, i) =>
    i === 2 ? { ...block, text: "\nHelp with code, and use judgment.\n" } : block
  );
  const environment = {
    role: "system",
    content: [{
      type: "text",
      text: "# Environment\nYou have been invoked in the following environment: \n" +
        ` - Primary working directory: ${cwd}\n - Is a git repository: false\n - Platform: linux\n`,
    }],
  };
  return claudeBody([claudeFirstUser(ask), environment], {
    model: "claude-opus-5-5",
    system,
    max_tokens: 128000,
    thinking: { type: "adaptive", display: "updates" },
  });
}

/** The Codex base prompt items: two developer messages, environment context, the ask. */
export function codexInput(ask: string) {
  return [
    {
      type: "message",
      id: "msg_dev_1",
      role: "developer",
      content: [{ type: "input_text", text: "You are a test coding agent." }],
    },
    {
      type: "message",
      id: "msg_dev_2",
      role: "developer",
      content: [
        {
          type: "input_text",
          text: "<permissions instructions>\nread-only\n</permissions instructions>",
        },
        { type: "input_text", text: "<tools>\nnone deferred\n</tools>" },
      ],
    },
    {
      type: "message",
      id: "msg_env",
      role: "user",
      content: [{
        type: "input_text",
        text:
          `<environment_context>\n  <cwd>${CWD}</cwd>\n  <shell>bash</shell>\n</environment_context>`,
      }],
    },
    { type: "message", id: "msg_ask", role: "user", content: [{ type: "input_text", text: ask }] },
  ];
}

export const CODEX_TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a command.",
    strict: false,
    parameters: {
      type: "object",
      properties: { cmd: { type: "string" } },
      required: ["cmd"],
      additionalProperties: false,
    },
  },
  {
    type: "custom",
    name: "apply_patch",
    description: "Patch files.",
    format: { type: "grammar", syntax: "lark", definition: "start: x" },
  },
  { type: "web_search", external_web_access: false },
];

/** A Codex request body with every top-level field it sends (no `instructions`). */
export function codexBody(input: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: "gpt-5.5",
    stream: true,
    input,
    tools: CODEX_TOOLS,
    tool_choice: "auto",
    parallel_tool_calls: true,
    reasoning: { effort: "medium" },
    store: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "thread-1",
    text: { verbosity: "low" },
    client_metadata: { session_id: "thread-1", turn_id: "turn-1" },
    ...extra,
  };
}
