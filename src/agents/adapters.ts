/** The adapter for each configured runner: a CLI adapter, or an HTTP API adapter. */
import type { CliRunner, HttpRunner } from "../config.ts";
import type { Adapter } from "./types.ts";
import type { HttpAdapter } from "./http.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { geminiAdapter } from "./gemini.ts";
import { commandAdapter } from "./command.ts";
import { anthropicAdapter } from "./anthropic.ts";
import { openaiAdapter } from "./openai.ts";

export const ADAPTERS: Readonly<Record<CliRunner, Adapter>> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  command: commandAdapter,
};

export const HTTP_ADAPTERS: Readonly<Record<HttpRunner, HttpAdapter>> = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
};
