/** The adapter for each configured runner. */
import type { RUNNERS } from "../config.ts";
import type { Adapter } from "./types.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { geminiAdapter } from "./gemini.ts";
import { commandAdapter } from "./command.ts";

export const ADAPTERS: Readonly<Record<(typeof RUNNERS)[number], Adapter>> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  command: commandAdapter,
};
