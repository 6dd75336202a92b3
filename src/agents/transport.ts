/**
 * How an HTTP child's request reaches its upstream: a POST whose streamed reply is handed on in
 * batches — all the bytes that arrived together, however many HTTP chunks or SSE events they
 * hold. Two transports: `node:http(s)` with one keep-alive pool per agent (the default: it
 * reads what the socket holds in one go), and `fetch` (used when a proxy is configured, since
 * only fetch honours HTTP(S)_PROXY; it yields one HTTP chunk per read).
 */
import http from "node:http";
import https from "node:https";

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

function joinBytes(parts: Uint8Array[], limit: number): Uint8Array {
  const size = Math.min(limit, parts.reduce((sum, p) => sum + p.length, 0));
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    if (offset >= size) break;
    const piece = part.subarray(0, size - offset);
    out.set(piece, offset);
    offset += piece.length;
  }
  return out;
}

// ---- node:http(s) ---------------------------------------------------------------------------

/** The keep-alive pools, one per agent (and origin), for the process's lifetime. */
const pools = new Map<string, http.Agent>();

function poolFor(key: string, url: URL): http.Agent {
  const id = `${key} ${url.protocol}//${url.host}`;
  let pool = pools.get(id);
  if (!pool) {
    const options = { keepAlive: true, scheduling: "lifo" as const };
    pool = url.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    pools.set(id, pool);
  }
  return pool;
}

function nodeHeaders(message: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** A socket reused from the pool may have been closed by the server just now: worth one resend. */
function isStaleSocket(err: unknown, request: http.ClientRequest): boolean {
  const code = (err as { code?: string })?.code;
  return request.reusedSocket && (code === "ECONNRESET" || code === "EPIPE");
}

function abortError(): Error {
  return new DOMException("aborted", "AbortError");
}

function nodeUpstream(message: http.IncomingMessage, signal: AbortSignal): Upstream {
  const destroy = () => message.destroy(abortError());
  return {
    status: message.statusCode ?? 0,
    statusText: message.statusMessage ?? "",
    headers: nodeHeaders(message),
    text(maxBytes = DEFAULT_TEXT_BYTES) {
      return new Promise((resolve) => {
        const parts: Uint8Array[] = [];
        let size = 0;
        const done = () => {
          signal.removeEventListener("abort", destroy);
          resolve(new TextDecoder().decode(joinBytes(parts, maxBytes)));
        };
        message.on("data", (chunk: Uint8Array) => {
          parts.push(chunk);
          size += chunk.length;
          // Enough for a message: the rest of a huge error page is not wanted.
          if (size >= maxBytes) message.destroy();
        });
        message.on("end", done);
        message.on("close", done);
        message.on("error", done);
        signal.addEventListener("abort", destroy, { once: true });
      });
    },
    pipe(onBatch) {
      return new Promise((resolve, reject) => {
        let parts: Uint8Array[] = [];
        let failed = false;
        const fail = (err: unknown) => {
          if (failed) return;
          failed = true;
          signal.removeEventListener("abort", destroy);
          message.destroy();
          reject(err);
        };
        // The 'data' events of one socket read come in one synchronous run (one per HTTP
        // chunk): a microtask after the first sees the whole batch, handed on as one piece.
        const flush = () => {
          if (failed || parts.length === 0) return;
          const batch = parts.length === 1 ? parts[0] : joinBytes(parts, Infinity);
          parts = [];
          try {
            onBatch(batch);
          } catch (err) {
            fail(err);
          }
        };
        message.on("data", (chunk: Uint8Array) => {
          if (failed) return;
          if (parts.push(chunk) === 1) queueMicrotask(flush);
        });
        message.on("end", () => {
          if (failed) return;
          flush();
          if (failed) return;
          signal.removeEventListener("abort", destroy);
          resolve();
        });
        message.on("error", fail);
        message.on("close", () => {
          if (!message.complete) {
            fail(signal.aborted ? abortError() : new Error("connection closed"));
          }
        });
        signal.addEventListener("abort", destroy, { once: true });
      });
    },
  };
}

function nodePost(url: URL, init: PostInit, pool: http.Agent): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    if (init.signal.aborted) return reject(abortError());
    const body = new TextEncoder().encode(init.body);
    const request = (url.protocol === "https:" ? https : http).request(url, {
      method: "POST",
      agent: pool,
      headers: { ...init.headers, "content-length": String(body.length) },
    });
    request.setNoDelay(true);
    const onAbort = () => request.destroy(abortError());
    init.signal.addEventListener("abort", onAbort, { once: true });
    request.on("response", (message: http.IncomingMessage) => {
      init.signal.removeEventListener("abort", onAbort);
      resolve(nodeUpstream(message, init.signal));
    });
    request.on("error", (err: Error) => {
      init.signal.removeEventListener("abort", onAbort);
      reject(Object.assign(err, { staleSocket: isStaleSocket(err, request) }));
    });
    request.end(body);
  });
}

/** POSTs over node:http(s) with the agent's keep-alive pool (resent once on a stale socket). */
export const nodeTransport: Transport = async (href, init) => {
  const url = new URL(href);
  const pool = poolFor(init.poolKey, url);
  try {
    return await nodePost(url, init, pool);
  } catch (err) {
    if (!(err as { staleSocket?: boolean }).staleSocket || init.signal.aborted) throw err;
    return await nodePost(url, init, pool);
  }
};

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
 * (only fetch honours the proxy variables), else node:http(s).
 */
export function transportFor(url: string, env: Readonly<Record<string, string>>): Transport {
  const { protocol, hostname } = new URL(url);
  const variables = PROXY_VARIABLES[protocol as keyof typeof PROXY_VARIABLES] ?? [];
  const proxied = variables.some((name) => env[name]);
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (!proxied || exempt(host, env.no_proxy ?? env.NO_PROXY ?? "")) return nodeTransport;
  return fetchTransport;
}
