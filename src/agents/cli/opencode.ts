/**
 * OpenCode adapter: `opencode run --format json …` argv (the prompt on stdin), its JSONL event
 * parser, and its read-only mode (a permission set that takes its write and shell tools away).
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
import { hasFlag } from "./flags.ts";
import { inFiles, withFileNotes } from "../attachment_notes.ts";

/** The model name that leaves the choice to the user's own OpenCode configuration. */
export const OPENCODE_OWN_MODEL = "default";

/**
 * A read-only child's permissions (OPENCODE_PERMISSION): OpenCode then offers the model no tool
 * that edits, writes, runs a shell or starts a subagent, `--auto` or not (it approves only what
 * is not denied). An agent's own `env` comes after the adapter's: one that sets this variable
 * itself chooses its own permissions.
 */
export const READ_ONLY_PERMISSION = { edit: "deny", bash: "deny", task: "deny" } as const;

/** Token counts of one `step_finish` (OpenCode reports each model request on its own). */
interface StepTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

function stepTokens(part: Record<string, unknown>): StepTokens | undefined {
  const tokens = objectField(part, "tokens");
  if (!tokens) return undefined;
  const cache = objectField(tokens, "cache");
  return {
    input: numberField(tokens, "input") ?? 0,
    output: (numberField(tokens, "output") ?? 0) + (numberField(tokens, "reasoning") ?? 0),
    cacheRead: numberField(cache, "read") ?? 0,
    cacheWrite: numberField(cache, "write") ?? 0,
    cost: numberField(part, "cost") ?? 0,
  };
}

/**
 * A parser for one run. OpenCode prints one event per line: `text` parts (whole, once each is
 * complete), `tool_use` parts once the tool ran, `step_finish` after each model request with
 * that request's tokens and cost, and `error`. It has no final answer event: the run's answer is
 * the text after its last tool use, complete at the `step_finish` that ends without calling a
 * tool. Its `input` tokens leave out the cache reads and writes; ours include them. It retries a
 * failing model request without a word on stdout or stderr, and prints one `error` event when it
 * gives up (then it may not exit): that event ends the run.
 */
export function createOpencodeParser(
  context: ParserContext = {},
): (line: string) => ParsedLine[] {
  const total: StepTokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
  let sinceTool = "";
  let wroteText = false;

  return (raw) => {
    const line = parseJsonLine(raw);
    if (line === "blank") return [];
    if (line === "invalid") return [{ type: "invalid", line: raw }];
    const part = objectField(line, "part") ?? {};
    switch (line.type) {
      case "text": {
        const text = stringField(part, "text") ?? "";
        if (!text) return [];
        // Each event is a whole part: parts are set apart as paragraphs.
        const separated = wroteText ? `\n\n${text}` : text;
        wroteText = true;
        sinceTool += sinceTool ? `\n\n${text}` : text;
        return [{ type: "text", text: separated }];
      }
      case "tool_use": {
        sinceTool = "";
        const input = objectField(objectField(part, "state"), "input") ?? {};
        // Its file tools name the path `filePath`.
        const { filePath, ...rest } = input;
        const named = typeof filePath === "string" ? { file_path: filePath, ...rest } : input;
        const name = stringField(part, "tool") ?? "tool";
        return [{ type: "activity", text: describeToolCall(name, named, context.cwd) }];
      }
      case "step_finish": {
        const step = stepTokens(part);
        const out: ParsedLine[] = [];
        if (step) {
          for (const key of Object.keys(total) as (keyof StepTokens)[]) total[key] += step[key];
          out.push({
            type: "usage",
            inputTokens: total.input + total.cacheRead + total.cacheWrite,
            outputTokens: total.output,
            ...(total.cost > 0 ? { costUsd: total.cost } : {}),
            ...counted("cacheReadTokens", total.cacheRead),
            ...counted("cacheWriteTokens", total.cacheWrite),
          });
        }
        // A step that called tools is followed by another; any other reason ends the run.
        if (stringField(part, "reason") !== "tool-calls") {
          out.push({ type: "final", text: sinceTool });
        }
        return out;
      }
      case "error": {
        const error = objectField(line, "error");
        const message = stringField(objectField(error, "data"), "message") ??
          stringField(error, "name") ?? "error";
        return [{ type: "final", error: oneLine(message, 300) }];
      }
      default:
        return [];
    }
  };
}

export const opencodeAdapter: Adapter = {
  defaultCommand: "opencode",
  // OpenCode names models `provider/model`; "default" runs the user's own configured model.
  defaultModel: OPENCODE_OWN_MODEL,
  versionArgs: ["--version"],
  overheadTokens: 20_000,
  // It runs any provider's models: it serves no family of its own. It reads its whole stdin
  // before it starts, however late the prompt comes.
  waitsForPrompt: true,
  endsOnError: true,
  usesTools: true,
  stdout: "jsonl",
  argv(agent, { model, delivery }) {
    // A title of our own: otherwise OpenCode asks the model for one, a request of its own.
    const args = ["run", "--format", "json", "--title", "council"];
    if (model !== OPENCODE_OWN_MODEL) args.push("--model", model);
    // `--file=FILE` one at a time: `--file` takes several values and would swallow what follows.
    for (const { attachment, path } of delivery ? inFiles(delivery) : []) {
      if (attachment.kind === "image") args.push(`--file=${path}`);
    }
    // Full-auto as CONTRACT.md §1.1.10 asks (headless, anything it would ask is refused);
    // read-only takes the write and shell tools away in its permissions (`env`).
    if (!hasFlag(agent.args, ["--auto"])) args.push("--auto");
    return [...args, ...agent.args];
  },
  // Images go with --file; a PDF is a file it can read with its own tools.
  takesFile: () => true,
  stdin: withFileNotes,
  env: ({ access }) => ({
    // Its sessions would go to the user's database: a child's stay in memory, gone at exit.
    OPENCODE_DB: ":memory:",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    ...(access === "read-only"
      ? { OPENCODE_PERMISSION: JSON.stringify(READ_ONLY_PERMISSION) }
      : {}),
  }),
  createParser: createOpencodeParser,
};
