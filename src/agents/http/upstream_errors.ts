/**
 * How an upstream's failures read: the wait it asks for, whether one retry is worth it, a
 * failed request or an error body in one line, and the API key masked wherever it is echoed.
 */
import { oneLine } from "../../base/text.ts";
import type { HttpAdapter } from "./http_api.ts";

/** The most of an error body that is read: enough for a message, never a huge page. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * How long the upstream asks us to wait, in ms: `retry-after-ms` (OpenAI), else `retry-after`
 * as seconds or an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `text` with every occurrence of `secret` masked (an upstream may echo the key it got). */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.replaceAll(secret, "***") : text;
}

/** Whether a status is worth the one retry: rate limited, or the upstream failed. */
export function isRetryable(status: number): boolean {
  return status === 429 || status >= 500;
}

/** A failed request (no HTTP response) in a few words: connection refused, host not found, … */
export function describeFetchError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
  const code = (err as { code?: unknown })?.code;
  const text = `${message} ${cause} ${typeof code === "string" ? code : ""}`;
  if (err instanceof Deno.errors.NotCapable || /Requires net access/i.test(text)) {
    return "not allowed to connect (the gateway needs --allow-net)";
  }
  if (/connection refused|ECONNREFUSED|os error 111/i.test(text)) return "connection refused";
  if (/dns error|failed to lookup|name or service not known|ENOTFOUND|EAI_AGAIN/i.test(text)) {
    return "host not found";
  }
  if (/certificate|tls|ssl/i.test(text)) return `TLS error: ${oneLine(cause || message, 200)}`;
  if (/connection reset|ECONNRESET|broken pipe/i.test(text)) return "connection reset";
  return oneLine(cause ? `${message}: ${cause}` : message, 200);
}

/** The upstream's error in one line: the adapter's reading of the body, else the body's start. */
export function upstreamMessage(
  adapter: HttpAdapter,
  status: number,
  statusText: string,
  body: string,
): string {
  const found = adapter.errorMessage(body);
  if (found) return oneLine(found, 300);
  const text = oneLine(body, 200);
  return text || statusText || `status ${status}`;
}

/** The start of a reply's body as text (at most 64 KiB); the rest is not read. */
export async function errorBodyText(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
  } catch {
    /* what came is enough for a message */
  } finally {
    await reader.cancel().catch(() => {});
  }
  const decoder = new TextDecoder();
  const text = parts.map((part) => decoder.decode(part, { stream: true })).join("");
  return text + decoder.decode();
}
