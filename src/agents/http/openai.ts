/**
 * The `openai` runner's API: OpenAI-compatible Chat Completions (`POST
 * {baseUrl}/chat/completions`, `stream: true` with usage) — what OpenAI, OpenRouter, Ollama,
 * vLLM, llama.cpp's server and LM Studio speak — with the prompt as messages and a cache key.
 */
import type { AgentConfig } from "../../config/mod.ts";
import { COUNCIL_DEPTH_HEADER } from "../child_env.ts";
import type { ParsedLine } from "../types.ts";
import {
  asRecord as record,
  baseUrlOf,
  type HttpAdapter,
  listedModelIds,
  readJson,
} from "./http_api.ts";
import type { SseEvent } from "./sse_parser.ts";
import { openaiMessages } from "./prompt_messages.ts";

/** `{baseUrl}` without a `/chat/completions` a user may have pasted with it. */
function apiRoot(agent: AgentConfig): string {
  return baseUrlOf(agent, openaiAdapter).replace(/\/chat\/completions$/, "");
}

/** Whether the agent talks to OpenAI's own API (not a compatible server). */
function isOpenAi(agent: AgentConfig): boolean {
  return /(^|\.)openai\.com$/i.test(new URL(apiRoot(agent)).hostname);
}

/** OpenAI's own API refuses `max_tokens` for its reasoning models; other servers know only it. */
function maxTokensField(agent: AgentConfig): string {
  return isOpenAi(agent) ? "max_completion_tokens" : "max_tokens";
}

function headersFor(agent: AgentConfig, apiKey: string | undefined): Record<string, string> {
  return {
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    // Were the base URL this gateway under another name, the server refuses the call.
    [COUNCIL_DEPTH_HEADER]: "1",
    ...agent.headers,
  };
}

type Json = Record<string, unknown>;

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/**
 * The message of an error body in the shapes servers use: `{error:{message,type}}` (OpenAI,
 * Ollama, llama.cpp), `{error:"…"}`, `{object:"error",message}` (vLLM), `{detail}` (FastAPI).
 */
function errorText(value: unknown): string | undefined {
  const body = record(value);
  if (!body) return undefined;
  if (typeof body.error === "string") return body.error;
  const error = record(body.error);
  if (error) {
    const message = typeof error.message === "string" ? error.message : undefined;
    const type = typeof error.type === "string" ? error.type : undefined;
    if (message && type) return `${type}: ${message}`;
    return message ?? type ?? JSON.stringify(error);
  }
  if (body.object === "error" && typeof body.message === "string") return body.message;
  if (typeof body.detail === "string") return body.detail;
  return undefined;
}

function createParser(): (event: SseEvent) => ParsedLine[] {
  return (event) => {
    if (event.data.trim() === "[DONE]") return [{ type: "final" }];
    let data: Json | undefined;
    try {
      data = record(JSON.parse(event.data));
    } catch {
      data = undefined;
    }
    if (!data) return [{ type: "invalid", line: event.data }];
    if (data.error !== undefined || data.object === "error") {
      return [{ type: "final", error: `error event: ${errorText(data) ?? event.data}` }];
    }
    const items: ParsedLine[] = [];
    const choices = Array.isArray(data.choices) ? data.choices : [];
    for (const choice of choices.map(record)) {
      // One completion is asked for; any other index is ignored.
      if (!choice || (choice.index !== undefined && choice.index !== 0)) continue;
      const content = record(choice.delta)?.content;
      if (typeof content === "string" && content) items.push({ type: "text", text: content });
      if (choice.finish_reason === "length") {
        items.push({ type: "activity", text: "answer cut at the token limit (maxTokens)" });
      }
      // The answer is complete here; some servers end the stream without `[DONE]`.
      if (typeof choice.finish_reason === "string") items.push({ type: "final" });
    }
    const usage = record(data.usage);
    if (usage) {
      const details = record(usage.prompt_tokens_details);
      items.push({
        type: "usage",
        inputTokens: count(usage.prompt_tokens),
        outputTokens: count(usage.completion_tokens),
        // Part of prompt_tokens, reported by OpenAI and by servers that cache prefixes.
        ...(details ? { cacheReadTokens: count(details.cached_tokens) ?? 0 } : {}),
        ...(details && count(details.cache_write_tokens) !== undefined
          ? { cacheWriteTokens: count(details.cache_write_tokens) }
          : {}),
      });
    }
    return items;
  };
}

export const openaiAdapter: HttpAdapter = {
  defaultApiKeyEnv: "OPENAI_API_KEY",
  // Local servers (Ollama, llama.cpp, …) take no key.
  keyRequired: false,
  endMarker: "[DONE]",
  request(agent, { model, prompt, attachments, apiKey }) {
    return {
      url: `${apiRoot(agent)}/chat/completions`,
      headers: headersFor(agent, apiKey),
      body: JSON.stringify({
        model,
        stream: true,
        stream_options: { include_usage: true },
        ...openaiMessages(prompt, attachments, isOpenAi(agent)),
        ...(agent.maxTokens ? { [maxTokensField(agent)]: agent.maxTokens } : {}),
      }),
    };
  },
  createParser,
  errorMessage: readJson(errorText),
  modelsRequest(agent, apiKey) {
    return { url: `${apiRoot(agent)}/models`, headers: headersFor(agent, apiKey) };
  },
  modelIds: listedModelIds,
};
