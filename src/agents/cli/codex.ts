/**
 * Codex CLI adapter: `codex exec --json … -` argv (prompt on stdin), and its JSONL parser.
 */
import type { Adapter, ParsedLine, ParserContext } from "../types.ts";
import {
  activityText,
  counted,
  numberField,
  objectField,
  parseJsonLine,
  shortPath,
  stringField,
  unwrapShell,
} from "./activity.ts";
import { oneLine } from "../../base/text.ts";
import { codexProviderIsGateway } from "./codex_config.ts";
import { type FlagSpec, hasFlag, withoutFlags } from "./flags.ts";
import { inFiles, withFileNotes } from "../attachment_notes.ts";

/** Flags that already choose a sandbox; then ours is not added (clap rejects duplicates). */
const SANDBOX_FLAGS = [
  "--sandbox",
  "-s",
  "--dangerously-bypass-approvals-and-sandbox",
  "--yolo",
  "--full-auto",
];

/** What a read-only run removes from the agent's args before adding `--sandbox read-only`. */
const WRITE_ENABLING_FLAGS: FlagSpec[] = [
  { flag: "--sandbox", takesValue: true },
  { flag: "-s", takesValue: true },
  { flag: "--dangerously-bypass-approvals-and-sandbox", takesValue: false },
  { flag: "--yolo", takesValue: false },
  { flag: "--full-auto", takesValue: false },
];

/**
 * Config that cuts codex's start-up without changing what it sends (measured with
 * `deno task bench --only clistart`): no analytics, no update check. An agent's own `-c` for the
 * same key wins.
 */
const STARTUP_CONFIG = ["analytics.enabled=false", "check_for_update_on_startup=false"];

const CHANGE_VERBS: Record<string, string> = { add: "Write", delete: "Delete", update: "Edit" };

/** The activity line of a tool item (a command once, when first seen), or none. */
function toolActivity(
  event: string,
  it: Record<string, unknown>,
  cwd: string | undefined,
  shownCommands: Set<string>,
): ParsedLine[] {
  switch (it.type) {
    case "command_execution": {
      // Shown once, when it starts (or when only its completion was printed).
      const id = stringField(it, "id") ?? "";
      if (shownCommands.has(id)) return [];
      shownCommands.add(id);
      return [{
        type: "activity",
        text: activityText(`$ ${unwrapShell(stringField(it, "command") ?? "")}`),
      }];
    }
    case "file_change": {
      if (event !== "item.completed") return [];
      const changes = Array.isArray(it.changes) ? it.changes : [];
      return changes.map((change): ParsedLine => ({
        type: "activity",
        text: activityText(
          `${CHANGE_VERBS[stringField(change, "kind") ?? ""] ?? "Change"} ${
            shortPath(stringField(change, "path") ?? "", cwd)
          }`,
        ),
      }));
    }
    case "mcp_tool_call": {
      if (event !== "item.started") return [];
      const name = [stringField(it, "server"), stringField(it, "tool")].filter(Boolean).join(".");
      return [{ type: "activity", text: activityText(`Tool ${name}`) }];
    }
    case "web_search":
      return event === "item.started"
        ? [{ type: "activity", text: activityText(`Search ${stringField(it, "query") ?? ""}`) }]
        : [];
    default:
      return [];
  }
}

/**
 * A parser for one run. Each `agent_message` item is text (a retried stream repeats the same
 * message: repeats are not sent twice); the last one is the final answer. Non-fatal `error`
 * items are ignored; top-level `Reconnecting... n/m` notices are retries; `turn.failed` is the
 * error.
 */
export function createCodexParser(context: ParserContext = {}): (line: string) => ParsedLine[] {
  let lastMessage: string | undefined;
  const shownCommands = new Set<string>();

  const item = (event: string, it: Record<string, unknown>): ParsedLine[] => {
    if (it.type !== "agent_message") return toolActivity(event, it, context.cwd, shownCommands);
    if (event !== "item.completed") return [];
    const text = stringField(it, "text") ?? "";
    if (text === lastMessage) return [];
    const out: ParsedLine[] = text
      ? [{ type: "text", text: lastMessage === undefined ? text : `\n\n${text}` }]
      : [];
    lastMessage = text;
    return out;
  };

  return (raw) => {
    const line = parseJsonLine(raw);
    if (line === "blank") return [];
    if (line === "invalid") return [{ type: "invalid", line: raw }];
    const type = stringField(line, "type") ?? "";
    if (type.startsWith("item.")) {
      const it = objectField(line, "item");
      return it ? item(type, it) : [];
    }
    if (type === "turn.completed") {
      const usage = objectField(line, "usage");
      const out: ParsedLine[] = [];
      if (usage && numberField(usage, "input_tokens") !== undefined) {
        out.push({
          type: "usage",
          inputTokens: numberField(usage, "input_tokens"),
          outputTokens: numberField(usage, "output_tokens") ?? 0,
          // Both are part of input_tokens.
          ...counted("cacheReadTokens", numberField(usage, "cached_input_tokens")),
          ...counted("cacheWriteTokens", numberField(usage, "cache_write_input_tokens")),
        });
      }
      out.push({ type: "final", text: lastMessage ?? "" });
      return out;
    }
    if (type === "error") return reconnecting(stringField(line, "message") ?? "");
    if (type === "turn.failed") {
      const message = stringField(objectField(line, "error"), "message") ?? "turn failed";
      return [{ type: "final", text: lastMessage, error: oneLine(message, 300) }];
    }
    return [];
  };
}

/** `{"type":"error","message":"Reconnecting... 2/5 (why)"}`: codex retrying its request. */
const RECONNECTING = /^Reconnecting\.\.\.\s*(\d+)\/(\d+)(?:\s*\((.*)\))?\s*$/s;

function reconnecting(message: string): ParsedLine[] {
  const match = RECONNECTING.exec(message.trim());
  if (!match) return [];
  return [{
    type: "retry",
    attempt: Number(match[1]),
    maxAttempts: Number(match[2]),
    ...(match[3] ? { reason: oneLine(match[3], 200) } : {}),
  }];
}

export const codexAdapter: Adapter = {
  defaultCommand: "codex",
  defaultModel: "gpt-5.5",
  versionArgs: ["--version"],
  overheadTokens: 20_000,
  family: { models: /^(?:gpt|o\d|codex)|codex/i, cheapModel: "gpt-5.1-codex-mini" },
  waitsForPrompt: true,
  usesTools: true,
  stdout: "jsonl",
  argv(agent, { model, delivery, providerIsGateway, access }) {
    const args = ["exec", "--json", "--skip-git-repo-check", "--model", model];
    // `--image=FILE` one at a time: `--image` takes several values and would swallow the "-".
    for (const { attachment, path } of delivery ? inFiles(delivery) : []) {
      if (attachment.kind === "image") args.push(`--image=${path}`);
    }
    const own = access === "read-only"
      ? withoutFlags(agent.args, WRITE_ENABLING_FLAGS)
      : agent.args;
    // Read-only: codex's read-only sandbox (commands run, writes fail). Otherwise full-auto as
    // CONTRACT.md §1.1.10 asks, inside codex's own workspace sandbox; args may tighten it.
    if (access === "read-only") args.push("--sandbox", "read-only");
    else if (!hasFlag(own, SANDBOX_FLAGS)) args.push("--sandbox", "workspace-write");
    // Children are one-shot: no session files in the user's ~/.codex/sessions.
    if (!hasFlag(own, ["--ephemeral"])) args.push("--ephemeral");
    // A user who followed `connect codex` has this gateway as the default provider in
    // ~/.codex/config.toml, which a child would read too: then, and only then, send the child
    // to the vendor's own provider, unless the agent's args choose one (-c model_provider=…).
    // Any other provider the user configured is kept.
    if (providerIsGateway && !own.some((arg) => /(^|\.)model_provider=/.test(arg))) {
      args.push("-c", 'model_provider="openai"');
    }
    for (const setting of STARTUP_CONFIG) {
      const key = setting.slice(0, setting.indexOf("=") + 1);
      if (!own.some((arg) => arg.startsWith(key))) args.push("-c", setting);
    }
    // "-" = read the prompt from stdin (codex starts only at end of input).
    return [...args, ...own, "-"];
  },
  // Images go with --image; a PDF is a file it can read with its own tools.
  takesFile: () => true,
  stdin: withFileNotes,
  createParser: createCodexParser,
  userProvider: codexProviderIsGateway,
};
