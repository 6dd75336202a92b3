/**
 * Gemini CLI adapter: `gemini --output-format stream-json …` argv, and its JSONL parser.
 */
import type { Adapter, ParsedLine, ParserContext } from "../types.ts";
import {
  counted,
  describeToolCall,
  numberField,
  objectField,
  parseJsonLine,
  stringField,
} from "./activity.ts";
import { oneLine } from "../../base/text.ts";
import { type FlagSpec, hasFlag, withoutFlags } from "./flags.ts";
import { inFiles, notInFiles, unseenNote, withNotes } from "../attachment_notes.ts";

const APPROVAL_FLAGS = ["--approval-mode", "--yolo", "-y"];
/** What a read-only run removes from the agent's args before adding its own approval mode. */
const WRITE_ENABLING_FLAGS: FlagSpec[] = [
  { flag: "--approval-mode", takesValue: true },
  { flag: "--yolo", takesValue: false },
  { flag: "-y", takesValue: false },
];
/** What gemini writes per run under ~/.gemini: chats and logs, per-project history, projects. */
export const GEMINI_HISTORY = ["tmp", "history", "projects.json"];

/**
 * A parser for one run: assistant `message` content is text (deltas, or whole messages), the
 * `result` line carries the token stats and success or error. Gemini has no final answer
 * field in stream-json, so the final text is what it wrote after its last tool use (earlier
 * text is narration); text after a tool use is set apart from earlier text by a blank line.
 */
export function createGeminiParser(context: ParserContext = {}): (line: string) => ParsedLine[] {
  let lastError: string | undefined;
  let wroteText = false;
  let afterTool = false;
  let sinceTool = "";

  return (raw) => {
    const line = parseJsonLine(raw);
    if (line === "blank") return [];
    if (line === "invalid") return [{ type: "invalid", line: raw }];
    switch (line.type) {
      case "message": {
        if (line.role !== "assistant") return [];
        const text = stringField(line, "content") ?? "";
        if (!text) return [];
        const separated = afterTool && wroteText ? `\n\n${text}` : text;
        afterTool = false;
        wroteText = true;
        sinceTool += text;
        return [{ type: "text", text: separated }];
      }
      case "tool_use":
        afterTool = true;
        sinceTool = "";
        return [{
          type: "activity",
          text: describeToolCall(
            stringField(line, "tool_name") ?? "tool",
            line.parameters,
            context.cwd,
          ),
        }];
      case "error":
        // Warnings are noise; an error is remembered in case the result does not say why.
        if (line.severity !== "warning") lastError = stringField(line, "message") ?? lastError;
        return [];
      case "result": {
        const stats = objectField(line, "stats");
        const out: ParsedLine[] = [];
        if (stats && numberField(stats, "input_tokens") !== undefined) {
          out.push({
            type: "usage",
            inputTokens: numberField(stats, "input_tokens"),
            outputTokens: numberField(stats, "output_tokens") ?? 0,
            // Part of input_tokens.
            ...counted("cacheReadTokens", numberField(stats, "cached")),
          });
        }
        if (line.status === "success") out.push({ type: "final", text: sinceTool });
        else {
          const message = stringField(objectField(line, "error"), "message") ?? lastError ??
            `status ${String(line.status)}`;
          out.push({ type: "final", error: oneLine(message, 300) });
        }
        return out;
      }
      default:
        return [];
    }
  };
}

/**
 * Gemini prints its retries on stderr, e.g. `Attempt 2 failed with status 503. Retrying with
 * backoff... ApiError: {…}`, `Attempt 1 failed with 5xx error. Retrying with backoff...` or
 * `Attempt 3 failed: <message>. Retrying after 5200ms...` (a stack trace follows on its own
 * lines).
 */
const GEMINI_RETRY = /^Attempt (\d+) failed(.*?)\. Retrying (?:with backoff|after \d+ms)\.\.\./;

export function parseGeminiStderr(line: string): ParsedLine[] {
  const match = GEMINI_RETRY.exec(line.trim());
  if (!match) return [];
  const detail = match[2].replace(/^(?::|\s+with)\s*/, "").replace(/^status\s+/, "");
  return [{
    type: "retry",
    attempt: Number(match[1]),
    ...(detail ? { reason: oneLine(detail, 200) } : {}),
  }];
}

export const geminiAdapter: Adapter = {
  defaultCommand: "gemini",
  defaultModel: "gemini-2.5-pro",
  versionArgs: ["--version"],
  overheadTokens: 20_000,
  family: { models: /gemini/i, cheapModel: "gemini-2.5-flash-lite" },
  waitsForPrompt: true,
  usesTools: true,
  stdout: "jsonl",
  argv(agent, { model, delivery, access }) {
    const args = ["--output-format", "stream-json", "--model", model];
    // Its @file references read only inside the workspace: the attachments' dir joins it.
    if (delivery?.dir) args.push("--include-directories", delivery.dir);
    const own = access === "read-only"
      ? withoutFlags(agent.args, WRITE_ENABLING_FLAGS)
      : agent.args;
    // Read-only: headless `default` approval registers no write or shell tool at all (`plan`
    // would still offer write_file, confined to its plans folder).
    if (access === "read-only") args.push("--approval-mode", "default");
    else if (!hasFlag(own, APPROVAL_FLAGS)) args.push("--approval-mode", "yolo");
    // Children often run in a fresh temp dir, which gemini would refuse as untrusted (exit 55).
    if (!hasFlag(own, ["--skip-trust"])) args.push("--skip-trust");
    return [...args, ...own];
  },
  // Images and PDFs, read through `@path` references in the prompt (its read_many_files).
  takesFile: () => true,
  stdin: (prompt, delivery) => {
    const references = inFiles(delivery).map(({ attachment, path }) =>
      `${attachment.label}: @${path.replaceAll(" ", "\\ ")}`
    );
    return withNotes(
      prompt,
      references.length ? `Attached (read each):\n${references.join("\n")}` : "",
      unseenNote(notInFiles(delivery)),
    );
  },
  // Gemini otherwise starts a second Node process of itself, only to raise its heap limit to
  // half the machine's memory; that relaunch is most of its start-up, and a headless child does
  // not need the larger heap (an agent's `env: {GEMINI_CLI_NO_RELAUNCH: ""}` restores it). Most of
  // the rest is compiling its bundle, which Node 22+ can cache between runs.
  env: ({ nodeCompileCache }) => ({
    GEMINI_CLI_NO_RELAUNCH: "true",
    ...(nodeCompileCache ? { NODE_COMPILE_CACHE: nodeCompileCache } : {}),
  }),
  // Gemini gives up on a stdin still silent shortly after its start-up; once a byte came, it waits.
  stdinPrimer: "\n",
  createParser: createGeminiParser,
  // Gemini records every chat under ~/.gemini/tmp (and projects beside it) with no switch to
  // turn that off: each child gets a throwaway home that still has the user's login.
  stateHome: { variable: "GEMINI_CLI_HOME", dir: ".gemini", unlinked: GEMINI_HISTORY },
  parseStderr: parseGeminiStderr,
};
