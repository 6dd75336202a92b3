/**
 * How an HTTP child's request reaches its upstream: a POST whose streamed reply is handed on in
 * batches — all the bytes that arrived together, however many HTTP chunks or SSE events they
 * hold. Two transports: our HTTP/1.1 client with one keep-alive pool per agent (the default, in
 * h1_client.ts: it reads what the socket holds in one go), and `fetch` (used when a proxy is
 * configured, since only fetch honours HTTP(S)_PROXY; it yields one HTTP chunk per read).
 */
import { joinBytes } from "./bytes.ts";
import { h1Transport } from "./h1_client.ts";

/** A reply whose status and headers have arrived; its body is read with `text` or `pipe`. */
export interface Upstream {
  status: number;
  statusText: string;
  headers: Headers;
  /** Reads at most `maxBytes` of the body as text, then lets the connection go. */
  text(maxBytes?: number): Promise<string>;
  /**
   * Hands the body on as it arrives, one batch at a time: the bytes that came together (the
   * array is the transport's to reuse; copy what must outlive the call). Resolves at the body's
   * end; rejects when the stream breaks or aborts, or `onBatch` throws.
   */
  pipe(onBatch: (bytes: Uint8Array) => void): Promise<void>;
}

export interface PostInit {
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** Requests with the same key share one connection pool (one key per agent). */
  poolKey: string;
}

/** Sends a POST; rejects when no reply comes (connection refused, host not found, aborted). */
export type Transport = (url: string, init: PostInit) => Promise<Upstream>;

const DEFAULT_TEXT_BYTES = 64 * 1024;

// ---- fetch ----------------------------------------------------------------------------------

/** Size of the one buffer a fetch body is read into. */
const READ_BUFFER_BYTES = 64 * 1024;

/** POSTs with `fetch` (Deno's own pool and its proxy settings). */
export const fetchTransport: Transport = async (url, init) => {
  const response = await fetch(url, {
    method: "POST",
    headers: init.headers,
    body: init.body,
    signal: init.signal,
  });
  return {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
    async text(maxBytes = DEFAULT_TEXT_BYTES) {
      if (!response.body) return "";
      const reader = response.body.getReader();
      const parts: Uint8Array[] = [];
      let size = 0;
      try {
        while (size < maxBytes) {
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
      return new TextDecoder().decode(joinBytes(parts, maxBytes));
    },
    async pipe(onBatch) {
      if (!response.body) return;
      // One reused buffer: the default reader allocates a fresh one per chunk.
      const reader = response.body.getReader({ mode: "byob" });
      let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
      try {
        for (;;) {
          const { done, value } = await reader.read(new Uint8Array(buffer));
          if (done || !value) return;
          buffer = value.buffer as ArrayBuffer;
          onBatch(value);
        }
      } catch (err) {
        await reader.cancel().catch(() => {});
        throw err;
      }
    },
  };
};

const PROXY_VARIABLES = {
  "http:": ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"],
  "https:": ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"],
} as const;

/** Whether `NO_PROXY` (comma-separated hosts, `.suffix`es, `*`) exempts the host. */
function exempt(host: string, noProxy: string): boolean {
  return noProxy.split(",").map((e) => e.trim().toLowerCase()).filter(Boolean).some((entry) => {
    if (entry === "*") return true;
    const name = entry.replace(/:\d+$/, "").replace(/^\*?\./, "");
    return host === name || host.endsWith(`.${name}`);
  });
}

/**
 * The transport for a URL: fetch when the gateway's environment sends that URL through a proxy
 * (only fetch honours the proxy variables), else our HTTP/1.1 client.
 */
export function transportFor(url: string, env: Readonly<Record<string, string>>): Transport {
  const { protocol, hostname } = new URL(url);
  const variables = PROXY_VARIABLES[protocol as keyof typeof PROXY_VARIABLES] ?? [];
  const proxied = variables.some((name) => env[name]);
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (!proxied || exempt(host, env.no_proxy ?? env.NO_PROXY ?? "")) return h1Transport;
  return fetchTransport;
}
