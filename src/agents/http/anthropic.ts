/**
 * The `anthropic` runner's API: Messages (`POST {baseUrl}/v1/messages`, `stream: true`) with the
 * prompt as cacheable messages, and the stream's events read into text, usage and the end.
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
import { anthropicMessages } from "./prompt_messages.ts";

const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
const ANTHROPIC_VERSION = "2023-06-01";
/** `max_tokens` is required by the API; this when the agent sets no `maxTokens`. */
export const DEFAULT_MAX_TOKENS = 8192;

/** The API root: `{baseUrl}` with a trailing `/v1` tolerated (the SDKs' base URL has none). */
function apiRoot(agent: AgentConfig): string {
  return baseUrlOf(agent, anthropicAdapter).replace(/\/v1$/, "");
}

function headersFor(agent: AgentConfig, apiKey: string | undefined): Record<string, string> {
  return {
    "anthropic-version": ANTHROPIC_VERSION,
    ...(apiKey ? { "x-api-key": apiKey } : {}),
    // Were the base URL this gateway under another name, the server refuses the call.
    [COUNCIL_DEPTH_HEADER]: "1",
    ...agent.headers,
  };
}

type Json = Record<string, unknown>;

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** `{type:"error", error:{type, message}}` → "type: message". */
function errorText(value: unknown): string | undefined {
  const error = record(record(value)?.error);
  if (!error) return undefined;
  const message = typeof error.message === "string" ? error.message : undefined;
  const type = typeof error.type === "string" ? error.type : undefined;
  if (message && type) return `${type}: ${message}`;
  return message ?? type;
}

/** Input tokens of a usage object: uncached plus cache writes and reads (all are billed). */
function inputTokens(usage: Json): number {
  return count(usage.input_tokens) + count(usage.cache_creation_input_tokens) +
    count(usage.cache_read_input_tokens);
}

/** The cache reads and writes of a usage object. */
function cacheTokens(usage: Json): { cacheReadTokens: number; cacheWriteTokens: number } {
  return {
    cacheReadTokens: count(usage.cache_read_input_tokens),
    cacheWriteTokens: count(usage.cache_creation_input_tokens),
  };
}

function createParser(): (event: SseEvent) => ParsedLine[] {
  let input: number | undefined;
  let output: number | undefined;
  let cache: ReturnType<typeof cacheTokens> | undefined;
  return (event) => {
    let data: Json | undefined;
    try {
      data = record(JSON.parse(event.data));
    } catch {
      data = undefined;
    }
    if (!data) return [{ type: "invalid", line: event.data }];
    switch (data.type ?? event.event) {
      case "message_start": {
        const usage = record(record(data.message)?.usage);
        if (!usage) return [];
        input = inputTokens(usage);
        output = count(usage.output_tokens);
        cache = cacheTokens(usage);
        return [{ type: "usage", inputTokens: input, outputTokens: output, ...cache }];
      }
      case "content_block_start": {
        const block = record(data.content_block);
        const text = block?.type === "text" && typeof block.text === "string" ? block.text : "";
        return text ? [{ type: "text", text }] : [];
      }
      case "content_block_delta": {
        const delta = record(data.delta);
        if (delta?.type === "text_delta" && typeof delta.text === "string" && delta.text) {
          return [{ type: "text", text: delta.text }];
        }
        return [];
      }
      case "message_delta": {
        const items: ParsedLine[] = [];
        const usage = record(data.usage);
        if (usage) {
          // Counts here are cumulative; input appears only on newer API versions.
          if (usage.input_tokens !== undefined) {
            input = inputTokens(usage);
            cache = cacheTokens(usage);
          }
          output = count(usage.output_tokens);
          items.push({ type: "usage", inputTokens: input, outputTokens: output, ...cache });
        }
        if (record(data.delta)?.stop_reason === "max_tokens") {
          items.push({ type: "activity", text: "answer cut at the token limit (maxTokens)" });
        }
        return items;
      }
      case "message_stop":
        return [{ type: "final" }];
      case "error":
        return [{ type: "final", error: `error event: ${errorText(data) ?? event.data}` }];
      default:
        // ping, content_block_stop, thinking and tool deltas: nothing for the answer.
        return [];
    }
  };
}

export const anthropicAdapter: HttpAdapter = {
  defaultBaseUrl: ANTHROPIC_BASE_URL,
  defaultApiKeyEnv: "ANTHROPIC_API_KEY",
  keyRequired: true,
  endMarker: "message_stop",
  request(agent, { model, prompt, attachments, apiKey }) {
    return {
      url: `${apiRoot(agent)}/v1/messages`,
      headers: headersFor(agent, apiKey),
      body: JSON.stringify({
        model,
        max_tokens: agent.maxTokens ?? DEFAULT_MAX_TOKENS,
        stream: true,
        ...anthropicMessages(prompt, attachments),
      }),
    };
  },
  createParser,
  errorMessage: readJson(errorText),
  modelsRequest(agent, apiKey) {
    return { url: `${apiRoot(agent)}/v1/models?limit=1000`, headers: headersFor(agent, apiKey) };
  },
  modelIds: listedModelIds,
};
