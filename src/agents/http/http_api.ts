/**
 * What an HTTP runner's model API is to the rest of the agents layer: an adapter of pure
 * functions from config to request and from events to parsed items, and the small readers the
 * adapters share. How a request travels is completion_stream.ts.
 */
import type { AgentConfig } from "../../config/mod.ts";
import type { LabelledAttachment } from "../../base/attachment.ts";
import type { AgentPrompt, ParsedLine } from "../types.ts";
import type { SseEvent } from "./sse_parser.ts";

/** A request as an adapter builds it (the transport adds content-type and accept). */
export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What a run's request is built from. */
interface RequestInput {
  model: string;
  /** Text: sent as a single user message; structured: as the API's messages, cacheably. */
  prompt: AgentPrompt;
  /** The turn's images and documents, sent with the prompt in the API's own shape. */
  attachments?: readonly LabelledAttachment[];
  /** Undefined when the key variable is unset (allowed only where the API needs no key). */
  apiKey?: string;
}

/** One model API: pure functions from config to request, and from events to parsed items. */
export interface HttpAdapter {
  /** Used when the agent sets no `baseUrl` (undefined: `baseUrl` is required). */
  defaultBaseUrl?: string;
  /** The gateway's variable holding the key when the agent sets no `apiKeyEnv`. */
  defaultApiKeyEnv: string;
  /** The API refuses every call without a key, so a missing key fails before the call. */
  keyRequired: boolean;
  /** The name of the event that ends a complete stream, for error messages. */
  endMarker: string;
  request(agent: AgentConfig, input: RequestInput): HttpRequest;
  /** Reads one SSE event; stateful (usage arrives in parts), so a factory. */
  createParser(): (event: SseEvent) => ParsedLine[];
  /** The message in an error body (JSON envelope or text), if one can be found. */
  errorMessage(body: string): string | undefined;
  /** GET request listing the models (doctor). */
  modelsRequest(
    agent: AgentConfig,
    apiKey?: string,
  ): { url: string; headers: Record<string, string> };
  /** Model ids in a models-list response body. */
  modelIds(body: unknown): string[];
}

/** The value when it is a JSON object (not null, not an array). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

/** The ids of a `{data: [{id}, …]}` models list, the shape both APIs use. */
export function listedModelIds(body: unknown): string[] {
  const data = asRecord(body)?.data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((entry) => {
    const id = asRecord(entry)?.id;
    return typeof id === "string" ? [id] : [];
  });
}

/** A reader of a JSON body's text: undefined when the text is not JSON. */
export function readJson<T>(
  read: (value: unknown) => T | undefined,
): (text: string) => T | undefined {
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    return read(value);
  };
}

/** The agent's API root without a trailing slash. */
export function baseUrlOf(agent: AgentConfig, adapter: HttpAdapter): string {
  return (agent.baseUrl ?? adapter.defaultBaseUrl ?? "").replace(/\/+$/, "");
}

/** The variable the agent's key is read from. */
export function apiKeyEnvOf(agent: AgentConfig, adapter: HttpAdapter): string {
  return agent.apiKeyEnv ?? adapter.defaultApiKeyEnv;
}
