/** The adapter of each HTTP runner (the CLI runners' are the runner table, cli/runners.ts). */
import type { HttpRunner } from "../config/mod.ts";
import type { HttpAdapter } from "./http/http_api.ts";
import { anthropicAdapter } from "./http/anthropic.ts";
import { openaiAdapter } from "./http/openai.ts";

export const HTTP_ADAPTERS: Readonly<Record<HttpRunner, HttpAdapter>> = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
};
