/**
 * Generic command adapter: any executable with `args` (`{model}` substituted) whose plain
 * stdout is the answer, streamed as it comes (`ollama run`, `llm`, a user's own script).
 */
import type { Adapter, ParsedLine } from "../types.ts";

export const commandAdapter: Adapter = {
  // No default: a `command` agent must name its executable.
  defaultCommand: "",
  // Its program is the model itself: running it (even for `--version`) could start work.
  overheadTokens: 0,
  // It may act before it reads its prompt, or never read it: it starts with its prompt.
  waitsForPrompt: false,
  // Its plain stdout is the answer from its first byte.
  usesTools: false,
  stdout: "text",
  argv: (agent, { model }) => agent.args.map((arg) => arg.replaceAll("{model}", model)),
  createParser: () => (chunk): ParsedLine[] => (chunk ? [{ type: "text", text: chunk }] : []),
};
