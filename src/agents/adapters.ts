/** The adapter for each configured runner: a CLI adapter, or an HTTP API adapter. */
import type { CliRunner, HttpRunner } from "../config/mod.ts";
import type { Adapter } from "./types.ts";
import type { HttpAdapter } from "./http/http_api.ts";
import { claudeAdapter } from "./cli/claude.ts";
import { codexAdapter } from "./cli/codex.ts";
import { geminiAdapter } from "./cli/gemini.ts";
import { commandAdapter } from "./cli/plain_command.ts";
import { anthropicAdapter } from "./http/anthropic.ts";
import { openaiAdapter } from "./http/openai.ts";

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
