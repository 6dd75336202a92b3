/**
 * Guards against browser-borne requests, as small Hono middleware with one job each. Children
 * run full-auto, so a web page that can reach the port must never start a turn: a foreign
 * `Host` (DNS rebinding), a foreign `Origin` and a body a page can send without a CORS preflight
 * are refused before anything runs. (No route sends CORS headers, so no page can read a reply
 * or send a preflighted request; tests/robustness/browser_test.ts holds that line.)
 */
import type { Context, MiddlewareHandler } from "hono";
import { isLoopbackHost } from "../../base/origins.ts";
import { moduleLogger } from "../../base/log.ts";

const log = moduleLogger("guard");

/** Answers a refusal in the error envelope of the endpoint that was asked. */
export type Refuse = (c: Context, status: 403 | 415, message: string) => Response;

/** Which `Host` headers name this gateway: host names, and the bound port once known. */
export interface HostRule {
  names: ReadonlySet<string>;
  /** Unknown when the app runs without a listener (in-process tests): then any port. */
  port?: number;
}

/** Always acceptable: a client on this machine may use any of these names. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

/** A Host value is a name or address and an optional port; anything else (`@`, `%`, …) is bad. */
const HOST_SYNTAX = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;

/** Host name without IPv6 brackets, lower-cased. */
function bareName(name: string): string {
  return name.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
}

/** The name (without IPv6 brackets) and port of a `Host` header, or undefined when malformed. */
export function splitHost(value: string): { name: string; port: number } | undefined {
  const text = value.trim();
  if (!HOST_SYNTAX.test(text)) return undefined;
  try {
    const url = new URL(`http://${text}`);
    return { name: bareName(url.hostname), port: url.port === "" ? 80 : Number(url.port) };
  } catch {
    return undefined;
  }
}

/**
 * The rule for a gateway answering on `origins` (its own origins, see `selfOriginsFor`; empty
 * before it listens), plus the configured `allowedHosts`.
 */
export function hostRule(origins: readonly string[], allowedHosts: readonly string[]): HostRule {
  const names = new Set([...LOOPBACK_NAMES, ...allowedHosts.map(bareName)]);
  let port: number | undefined;
  for (const origin of origins) {
    const url = URL.parse(origin);
    if (!url) continue; // an interface address no URL can name cannot be in a Host either
    names.add(bareName(url.hostname));
    port = url.port === "" ? 80 : Number(url.port);
  }
  return { names, port };
}

/** Whether a `Host` header value names this gateway. */
export function hostAllowed(value: string, rule: HostRule): boolean {
  const host = splitHost(value);
  if (!host || !rule.names.has(host.name)) return false;
  return rule.port === undefined || host.port === rule.port;
}

/**
 * DNS-rebinding guard: a page whose own name resolves to 127.0.0.1 reaches the port with its
 * name in `Host`. A request without a Host header (HTTP/1.0) cannot come from such a page; the
 * URL then carries the listener's own address.
 */
export function requireKnownHost(rule: () => HostRule, refuse: Refuse): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (!hostAllowed(host, rule())) {
      log.warn("refused a request for host {host}: not a name of this gateway", { host });
      return refuse(
        c,
        403,
        `host ${JSON.stringify(host.slice(0, 100))} is not allowed; add it to allowedHosts ` +
          `to reach the gateway under that name`,
      );
    }
    await next();
  };
}

/** True for `http(s)://` origins on this machine (`localhost`, `127.x`, `[::1]`, any port). */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin.trim());
    return (url.protocol === "http:" || url.protocol === "https:") &&
      isLoopbackHost(url.hostname);
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and garbage
  }
}

/** Browsers send `Origin` on cross-origin posts; only pages served from this machine may call. */
export function requireLoopbackOrigin(refuse: Refuse): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !isLoopbackOrigin(origin)) {
      log.warn("refused a request from origin {origin}", { origin });
      return refuse(c, 403, "requests from web pages are not allowed");
    }
    await next();
  };
}

/** `application/json`, with or without parameters (`; charset=utf-8`), in any case. */
export function isJsonContentType(value: string): boolean {
  return value.split(";")[0].trim().toLowerCase() === "application/json";
}

/**
 * A page can post `text/plain`, form or multipart bodies, or a body without a content type,
 * with no CORS preflight; JSON needs one, which we never grant. So a body must be declared
 * JSON. A missing content type is accepted only without an `Origin` header (curl, scripts).
 */
export function requireJsonBody(refuse: Refuse): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.header("content-type");
    const ok = type === undefined ? c.req.header("origin") === undefined : isJsonContentType(type);
    if (!ok) {
      const shown = type === undefined ? "none" : JSON.stringify(type.slice(0, 100));
      return refuse(
        c,
        415,
        `content-type must be application/json (got ${shown})`,
      );
    }
    await next();
  };
}
