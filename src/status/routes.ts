/**
 * The status surface over HTTP: `GET /health` (no auth), the dashboard page at `GET /`, and, behind
 * the gateway's auth, the status document (`GET /v1/council/status`) and its live stream
 * (`GET /v1/council/events`, SSE).
 */
import type { Context, Hono, Next } from "hono";
import { type Clock, systemClock, type TimerId } from "../base/clock.ts";
import { isLoopbackHost } from "../base/origins.ts";
import { sseResponse } from "../protocol/sse_writer.ts";
import { errorReply } from "../protocol/error_envelope.ts";
import { redact } from "../base/redact.ts";
import { DASHBOARD_CSP, dashboardPage } from "./dashboard/page.ts";
import { sessionKeysFor } from "./session_lookup.ts";
import type { GatewayInfo, StatusStore } from "./store.ts";
import type { StatusDocument } from "./types.ts";
import type { TeamStatus } from "../store/team.ts";
import { SEAT_WINDOWS, type SeatWindow } from "../ledger/seats.ts";

const STATUS_PATHS = {
  health: "/health",
  dashboard: "/",
  status: "/v1/council/status",
  team: "/v1/council/team",
  events: "/v1/council/events",
} as const;

/** The least time between two status frames on the stream. */
export const EVENTS_MIN_GAP_MS = 500;
/** While a turn runs or an agent cools down, a frame at least this often (times move). */
export const EVENTS_TICK_MS = 1000;
const EVENTS_KEEP_ALIVE_MS = 15_000;

export interface StatusRoutesDeps {
  store: StatusStore;
  info: () => GatewayInfo;
  /** Whether a token is configured now (the dashboard then asks for it). */
  authOn: () => boolean;
  clock?: Clock;
  /** With a shared database: every replica with its live turns, totals, and spend per key. */
  team?: () => Promise<TeamStatus>;
}

/** A Deno.serve `info` (the peer's address) when the app was called by a listener. */
function peerHost(c: Context): string | undefined {
  const env = c.env as { info?: { remoteAddr?: { hostname?: string } } } | undefined;
  return env?.info?.remoteAddr?.hostname;
}

/** Hono answers HEAD with a GET route; only GET is served here (HEAD falls through to 404). */
const getOnly =
  (handler: (c: Context) => Response | Promise<Response>) => (c: Context, next: Next) =>
    c.req.raw.method === "GET" ? handler(c) : next();

/** Routes that need no token: registered before the gateway's auth. */
export function mountPublicStatusRoutes(app: Hono, deps: StatusRoutesDeps): void {
  app.get(
    STATUS_PATHS.health,
    getOnly((c) => c.json({ ok: true, version: deps.info().version })),
  );
  app.get(
    STATUS_PATHS.dashboard,
    getOnly((c) => {
      const auth = deps.authOn();
      const peer = peerHost(c);
      // Without a token the page would show everything to whoever reaches the port.
      if (!auth && peer !== undefined && !isLoopbackHost(peer)) {
        const message = "the dashboard is served only to this machine when no token is set";
        return errorReply("messages", 403, message);
      }
      return c.html(dashboardPage({ auth }), 200, {
        "content-security-policy": DASHBOARD_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
      });
    }),
  );
}

/**
 * The document as it may leave the gateway: agents' activity lines and the judge's reasons are
 * their text, so every secret the process knows is masked in it, as in logs and progress.
 */
function redacted(doc: StatusDocument): StatusDocument {
  return JSON.parse(redact(JSON.stringify(doc)));
}

async function documentFor(
  deps: StatusRoutesDeps,
  session: string | undefined,
  window: SeatWindow,
): Promise<StatusDocument> {
  const { store } = deps;
  if (session === undefined || session === "") {
    return redacted(store.document(deps.info(), undefined, window));
  }
  for (const key of await sessionKeysFor(session)) {
    const doc = store.document(deps.info(), key, window);
    if (doc.session) return redacted(doc);
  }
  return redacted(store.document(deps.info(), session, window));
}

/** The seats' window a request asks for (`?window=`, default all); undefined when invalid. */
function windowOf(c: Context): SeatWindow | undefined {
  const asked = c.req.query("window") ?? "all";
  return (SEAT_WINDOWS as readonly string[]).includes(asked) ? asked as SeatWindow : undefined;
}

function badWindow(c: Context): Response {
  const message = `window: ${JSON.stringify(c.req.query("window"))} is not today, 7d or all`;
  return errorReply("messages", 400, message);
}

/** Routes behind the gateway's auth. */
export function mountStatusRoutes(app: Hono, deps: StatusRoutesDeps): void {
  const clock = deps.clock ?? systemClock;
  app.get(
    STATUS_PATHS.status,
    getOnly(async (c) => {
      const window = windowOf(c);
      if (!window) return badWindow(c);
      const doc = await documentFor(deps, c.req.query("session"), window);
      return c.json(doc, 200, { "cache-control": "no-store" });
    }),
  );
  app.get(
    STATUS_PATHS.team,
    getOnly(async (c) => {
      if (!deps.team) return c.json({ replicas: [], totals: null, keys: [] });
      try {
        return c.json(await deps.team(), 200, { "cache-control": "no-store" });
      } catch (err) {
        const message = `the database is unreachable: ${(err as Error).message}`;
        return errorReply("messages", 503, message);
      }
    }),
  );
  app.get(
    STATUS_PATHS.events,
    getOnly((c) => {
      const window = windowOf(c);
      return window ? statusEvents(deps, clock, c.req.raw.signal, window) : badWindow(c);
    }),
  );
}

/** The status document as an SSE stream: at once, then after changes and while turns run. */
function statusEvents(
  deps: StatusRoutesDeps,
  clock: Clock,
  requestSignal: AbortSignal,
  window: SeatWindow,
): Response {
  return sseResponse({
    clock,
    keepAliveMs: EVENTS_KEEP_ALIVE_MS,
    keepAlive: () => ({ event: "ping", data: {} }),
    requestSignal,
    run: (channel) =>
      new Promise<void>((resolve) => {
        let lastSent = -Infinity;
        let pending: TimerId | undefined;
        const push = () => {
          pending = undefined;
          lastSent = clock.now();
          const doc = deps.store.document(deps.info(), undefined, window);
          channel.send({ event: "status", data: redacted(doc) });
        };
        const schedule = () => {
          if (pending !== undefined) return;
          const wait = Math.max(0, EVENTS_MIN_GAP_MS - (clock.now() - lastSent));
          pending = clock.setTimeout(push, wait);
        };
        push();
        const unsubscribe = deps.store.subscribe(schedule);
        // One more frame after time stops moving: the one where a cool-down has ended.
        let moving = false;
        const tick = clock.setInterval(() => {
          const was = moving;
          moving = deps.store.moving();
          if (moving || was) schedule();
        }, EVENTS_TICK_MS);
        const stop = () => {
          unsubscribe();
          clock.clearInterval(tick);
          if (pending !== undefined) clock.clearTimeout(pending);
          resolve();
        };
        if (channel.signal.aborted) stop();
        else channel.signal.addEventListener("abort", stop, { once: true });
      }),
  });
}
