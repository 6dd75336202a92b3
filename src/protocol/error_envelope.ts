/**
 * Every error reply the gateway sends, in the envelope of the protocol that was asked: Anthropic's
 * `{type:"error", error:{type, message}}` on the Messages paths, OpenAI's `{error:{message, type,
 * param, code}}` on /v1/responses (both with CONTRACT.md §2.3's top-level `type:"error"`), and
 * both sets of fields where no request was read (the gate's own replies). The status picks the
 * error type; every message is redacted here.
 */
import { redact } from "../base/redact.ts";
import type { SseFrame } from "./sse_writer.ts";

/** Whose envelope: a protocol's, or `unknown` (no request was read) for both sets of fields. */
export type ErrorProtocol = "messages" | "responses" | "unknown";

export interface ErrorOptions {
  /** Seconds the client should wait: an integer `retry-after` header. */
  retryAfterSec?: number;
  /** OpenAI's `code`, instead of the status's (e.g. `missing_required_parameter`). */
  code?: string | null;
  /** OpenAI's `param`: the field at fault. */
  param?: string | null;
}

/** Anthropic's error type for each status it names (docs: "Errors"); others by class. */
const MESSAGES_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  // The gateway's 503s say "not now, retry": Anthropic's word for that is overloaded.
  503: "overloaded_error",
  529: "overloaded_error",
  // Malformed HTTP (unsupported framing or version): the client's fault, not the server's.
  501: "invalid_request_error",
  505: "invalid_request_error",
};

/** OpenAI's type and code where they differ from Anthropic's type and no code. */
const RESPONSES_TYPES: Readonly<Record<number, { type: string; code: string }>> = {
  401: { type: "authentication_error", code: "invalid_api_key" },
  413: { type: "invalid_request_error", code: "request_too_large" },
  429: { type: "rate_limit_error", code: "rate_limit_exceeded" },
};

const SERVER_ERROR = { type: "server_error", code: "server_error" } as const;

/** The protocol whose envelope a path answers in: /v1/responses is OpenAI's, the rest Anthropic's. */
export function protocolOfPath(path: string): "messages" | "responses" {
  return path === "/v1/responses" || path.startsWith("/v1/responses/") ? "responses" : "messages";
}

function messagesType(status: number): string {
  return MESSAGES_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

function responsesTypeAndCode(status: number): { type: string; code: string | null } {
  const own = RESPONSES_TYPES[status];
  if (own) return own;
  const type = messagesType(status);
  // A server-side failure is OpenAI's `server_error`, whatever Anthropic calls it.
  return type === "api_error" || type === "overloaded_error" ? SERVER_ERROR : { type, code: null };
}

/** The JSON body of an error reply (also the data of a Messages stream's `error` event). */
export function errorBody(
  protocol: ErrorProtocol,
  status: number,
  message: string,
  options: ErrorOptions = {},
) {
  const safe = redact(message);
  if (protocol === "messages") {
    return { type: "error" as const, error: { type: messagesType(status), message: safe } };
  }
  const param = options.param ?? null;
  if (protocol === "unknown") {
    const code = options.code ?? null;
    return {
      type: "error" as const,
      error: { type: messagesType(status), message: safe, param, code },
    };
  }
  const fixed = responsesTypeAndCode(status);
  const code = options.code === undefined ? fixed.code : options.code;
  return { type: "error" as const, error: { message: safe, type: fixed.type, param, code } };
}

/** The headers an error reply carries besides its content type. */
export function errorHeaders(options: ErrorOptions = {}): Record<string, string> {
  const seconds = options.retryAfterSec;
  return seconds === undefined ? {} : { "retry-after": String(Math.max(0, Math.ceil(seconds))) };
}

/** An error reply: `status`, the protocol's envelope and its headers. */
export function errorReply(
  protocol: ErrorProtocol,
  status: number,
  message: string,
  options: ErrorOptions = {},
): Response {
  return Response.json(errorBody(protocol, status, message, options), {
    status,
    headers: errorHeaders(options),
  });
}

/** A Messages stream's failure after its 200: the `error` event, in the same envelope. */
export function streamErrorFrame(message: string): SseFrame {
  return { event: "error", data: errorBody("messages", 500, message) };
}
