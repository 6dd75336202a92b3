/**
 * Generic command adapter: any executable with `args` (`{model}` substituted) whose plain
 * stdout is the answer, streamed as it comes (`ollama run`, `llm`, a user's own script).
 */
import type { Adapter, ParsedLine } from "../types.ts";

export const commandAdapter: Adapter = {
  // No default: a `command` agent must name its executable.
  defaultCommand: "",
  stdout: "text",
  argv: (agent, { model }) => agent.args.map((arg) => arg.replaceAll("{model}", model)),
  createParser: () => (chunk): ParsedLine[] => (chunk ? [{ type: "text", text: chunk }] : []),
};
