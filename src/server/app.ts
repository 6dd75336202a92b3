/**
 * The HTTP app: the four endpoints of CONTRACT.md §4 behind their middleware (access log, browser
 * guards, recursion guard, auth and its throttle, body budget and limit, turn slots); every
 * refusal is answered in the asked protocol's envelope (protocol/error_envelope.ts).
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { every } from "hono/combine";
import type { Logger } from "@logtape/logtape";
import { createTokenCheck, presentedTokens } from "./middleware/auth.ts";
import type { GateRefusal } from "../store/team.ts";
import { whenBodyEnds } from "./middleware/body_end.ts";
import type { Config } from "../config/mod.ts";
import { moduleLogger } from "../base/log.ts";
import {
  type HostRule,
  hostRule,
  requireJsonBody,
  requireKnownHost,
  requireLoopbackOrigin,
} from "./middleware/browser_guards.ts";
import { listModels } from "./models.ts";
import { codexModelList, isCodexModelsRequest } from "./codex_models.ts";
import { countTokens } from "../protocol/count_tokens.ts";
import { type ErrorOptions, errorReply, protocolOfPath } from "../protocol/error_envelope.ts";
import {
  mountPublicStatusRoutes,
  mountStatusRoutes,
  type StatusRoutesDeps,
} from "../status/routes.ts";
import type { ProtocolHandler } from "../protocol/protocol_handler.ts";
import { COUNCIL_DEPTH_HEADER } from "../agents/child_env.ts";
import type { AuthThrottle } from "./middleware/auth_throttle.ts";
import type { BodyBudget } from "./middleware/body_budget.ts";
import type { TurnSlots } from "./middleware/turn_slots.ts";

/** Set by the agents layer on every child; a request carrying it came from our own child. */
const DEPTH_HEADER = COUNCIL_DEPTH_HEADER;
export const RECURSION_MESSAGE = "recursive call from a council child";

/** The four endpoints of CONTRACT.md §4. */
export const PATHS = {
  messages: "/v1/messages",
  responses: "/v1/responses",
  countTokens: "/v1/messages/count_tokens",
  models: "/v1/models",
} as const;

type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; message: string };

/** A request body (already within the size limit) as JSON, or why it is not. */
function parseJsonBytes(bytes: Uint8Array): BodyResult {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, message: "request body is not valid UTF-8" };
  }
  if (text.trim() === "") return { ok: false, message: "request body is empty" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const detail = (err as Error).message.slice(0, 200);
    return { ok: false, message: `request body is not valid JSON: ${detail}` };
  }
}

/** What the serving layer passes with each request (absent when the app is called directly). */
export interface RequestEnv {
  /** Settles once the response has been sent or given up. */
  completed?: Promise<void>;
  /** The client's address. */
  peer?: string;
}

type AppEnv = { Bindings: RequestEnv | undefined; Variables: { body: unknown } };
type AppContext = Context<AppEnv>;

/** Limits shared by every request; each is off when absent. */
export interface AppLimits {
  turns?: TurnSlots;
  bodies?: BodyBudget;
  authFailures?: AuthThrottle;
}

/** A team on a shared database: person keys are let in, and each turn passes its gate. */
export interface TeamGate {
  personKey(presented: string[]): Promise<unknown>;
  gate(presented: string[], next: () => Promise<void>): Promise<GateRefusal | undefined>;
}

interface AppDeps {
  config: Readonly<Config>;
  team?: TeamGate;
  messages: ProtocolHandler;
  responses: ProtocolHandler;
  limits?: AppLimits;
  logger?: Logger;
  /** Shown as every model's `created_at`; default: now. */
  startedAt?: Date;
  /**
   * The listener's own origins (see `selfOriginsFor`), for the Host guard. Without them (an app
   * without a listener) the configured host and loopback names are accepted on any port.
   */
  origins?: () => readonly string[];
  /** The status surface (health, dashboard, status API); absent: those paths are 404. */
  status?: StatusRoutesDeps;
}

/**
 * Codex tries the Responses WebSocket transport first when its provider allows it; a 426 makes
 * it fall back to HTTP on the first try, where a 404 costs it every retry first.
 */
const WEBSOCKET_REFUSAL = "the WebSocket transport is not served here: POST /v1/responses";

function isWebSocketUpgrade(headers: Headers): boolean {
  return /\bwebsocket\b/i.test(headers.get("upgrade") ?? "");
}

const COUNCIL_PATHS: ReadonlySet<string> = new Set([PATHS.messages, PATHS.responses]);
const MODEL_PATHS: ReadonlySet<string> = new Set(Object.values(PATHS));

/** The protocol whose envelope answers `c`: its path's, and OpenAI's for Codex's model list. */
function protocolOf(c: Context): "messages" | "responses" {
  const codexModels = c.req.path === PATHS.models &&
    isCodexModelsRequest(c.req.url, c.req.raw.headers);
  return codexModels ? "responses" : protocolOfPath(c.req.path);
}

/** Answers in the error envelope of the endpoint that was asked. */
function refuse(c: Context, status: number, message: string, options?: ErrorOptions): Response {
  return errorReply(protocolOf(c), status, message, options);
}

/** HTTP 429 with an integer `retry-after` (Claude Code honours up to 60 s). */
function tooMany(c: Context, retryAfterSec: number, message: string): Response {
  return refuse(c, 429, message, { retryAfterSec });
}

/** Runs `next`, then `release` once the response is sent (or, called directly, returned). */
async function holdUntilSent(c: AppContext, next: () => Promise<void>, release: () => void) {
  const completed = c.env?.completed;
  if (!completed) return await next().finally(release);
  completed.then(release, release);
  await next();
}

function accessLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const status = c.res.status;
    // A stream the client closed (Esc in the host) must not read like a finished reply.
    const line = (closedByClient = false) => {
      const fields = {
        method: c.req.method,
        path: c.req.path,
        status,
        ms: Math.round(performance.now() - started),
      };
      const message = `{method} {path} {status} {ms}ms${
        closedByClient ? " (closed by the client)" : ""
      }`;
      if (status >= 500) log.error(message, fields);
      else if (status >= 400 || COUNCIL_PATHS.has(c.req.path)) log.info(message, fields);
      else log.debug(message, fields);
    };
    // A streamed turn is logged when its stream ends, with the turn's real duration.
    const streamed = c.res.headers.get("content-type")?.startsWith("text/event-stream");
    if (streamed) c.res = whenBodyEnds(c.res, line);
    else line();
  };
}

/** Refuses our own children, then checks the token; an address that keeps failing waits. */
function authenticate(deps: AppDeps, log: Logger): MiddlewareHandler<AppEnv> {
  const isAuthorized = createTokenCheck(deps.config.token);
  const throttle = deps.config.token ? deps.limits?.authFailures : undefined;
  return async (c, next) => {
    if (c.req.header(DEPTH_HEADER) !== undefined) {
      log.warn("refused a request from a council child ({header} header)", {
        header: DEPTH_HEADER,
      });
      return refuse(c, 400, RECURSION_MESSAGE);
    }
    const peer = c.env?.peer;
    const blockedMs = peer && throttle ? throttle.blockedForMs(peer) : 0;
    if (blockedMs > 0) {
      // Still a 401 (the host shows its usual auth error), but the token goes unchecked.
      const seconds = Math.ceil(blockedMs / 1000);
      const message =
        `unauthorized: too many failed attempts from this address; retry in ${seconds}s`;
      return refuse(c, 401, message, { retryAfterSec: seconds });
    }
    const person = isAuthorized(c.req.raw.headers) ? "admin" : await personKeyOf(deps.team, c);
    if (person === "unreachable") {
      // The key cannot be checked: not the client's fault, so no failure is counted.
      return refuse(c, 503, "the team database is unreachable; retry shortly", {
        retryAfterSec: 2,
      });
    }
    if (person === "none") {
      if (peer && throttle) throttle.failed(peer);
      return refuse(c, 401, "unauthorized");
    }
    if (peer && throttle) throttle.succeeded(peer);
    await next();
  };
}

/** Reserves the body's size (declared, else the limit) from the shared budget until sent. */
function reserveBody(budget: BodyBudget | undefined, maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!budget) return await next();
    const declared = Number(c.req.header("content-length") ?? NaN);
    const bytes = Number.isSafeInteger(declared) && declared <= maxBytes ? declared : maxBytes;
    const release = budget.reserve(bytes);
    if (!release) {
      return tooMany(c, 1, "too many request bytes in flight; retry in 1s");
    }
    await holdUntilSent(c, next, release);
  };
}

function limitBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  const message = `request body exceeds ${maxBytes} bytes`;
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) => refuse(c, 413, message),
  });
}

/** Parses the body as JSON into `c.var.body`, or answers 400. */
const parseBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const result = parseJsonBytes(new Uint8Array(await c.req.arrayBuffer()));
  if (!result.ok) {
    return refuse(c, 400, result.message, { code: "invalid_request_error" });
  }
  c.set("body", result.value);
  await next();
};

/**
 * A person key lets in to the model paths only (the status routes need the admin token);
 * `unreachable` when a key was offered but the database cannot say whose it is.
 */
async function personKeyOf(
  team: TeamGate | undefined,
  c: AppContext,
): Promise<"key" | "none" | "unreachable"> {
  if (!team || !MODEL_PATHS.has(c.req.path)) return "none";
  try {
    return (await team.personKey(presentedTokens(c.req.raw.headers))) ? "key" : "none";
  } catch {
    return "unreachable";
  }
}

/** Runs the turn through the team's gate, or answers its refusal in the protocol's envelope. */
function gateTurn(team: TeamGate | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!team) return await next();
    const refusal = await team.gate(presentedTokens(c.req.raw.headers), next);
    if (!refusal) return;
    return refuse(c, refusal.status, refusal.message, {
      retryAfterSec: refusal.retryAfterS,
      code: refusal.code,
    });
  };
}

/** Holds a turn slot (waiting in the queue if need be) until the response is sent. */
function takeTurnSlot(slots: TurnSlots | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!slots) return await next();
    const slot = slots.acquire(c.req.raw.signal);
    if ("full" in slot) {
      return tooMany(c, slot.retryAfterS, `the gateway is busy; retry in ${slot.retryAfterS}s`);
    }
    let release: () => void;
    try {
      release = await slot;
    } catch {
      return new Response(null, { status: 499 }); // the client left while queued
    }
    await holdUntilSent(c, next, release);
  };
}

/** The status routes (status/routes.ts) as an app of their own, to mount at a point in ours. */
function statusRoutes(mount: (app: Hono, deps: StatusRoutesDeps) => void, deps: StatusRoutesDeps) {
  const routes = new Hono();
  mount(routes, deps);
  return routes;
}

/** Builds the Hono app. Routing ignores query strings (Claude Code posts `?beta=true`). */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config } = deps;
  const log = deps.logger ?? moduleLogger("server");
  const models = listModels(config.defaultAgents, deps.startedAt ?? new Date());
  const codexModels = codexModelList(config.defaultAgents);
  const app = new Hono<AppEnv>();
  const ownOrigins = deps.origins ?? (() => []);
  let ownHostsFor: { origins: readonly string[]; rule: HostRule } | undefined;
  const ownHosts = () => {
    const origins = ownOrigins();
    if (ownHostsFor?.origins !== origins) {
      ownHostsFor = { origins, rule: hostRule(origins, [config.host, ...config.allowedHosts]) };
    }
    return ownHostsFor.rule;
  };
  app.use("*", accessLog(log));
  app.use("*", requireKnownHost(ownHosts, refuse), requireLoopbackOrigin(refuse));
  if (deps.status) app.route("/", statusRoutes(mountPublicStatusRoutes, deps.status));
  app.use("*", authenticate(deps, log));
  // Hono answers HEAD with the GET route; CONTRACT.md §4 allows only the four method/path pairs.
  app.use("*", (c, next) => c.req.raw.method === "HEAD" ? Promise.resolve(c.notFound()) : next());
  if (deps.status) app.route("/", statusRoutes(mountStatusRoutes, deps.status));

  const body = every(
    requireJsonBody(refuse),
    reserveBody(deps.limits?.bodies, config.maxBodyBytes),
    limitBody(config.maxBodyBytes),
  );
  const turn = every(body, parseBody, takeTurnSlot(deps.limits?.turns), gateTurn(deps.team));
  app.post(PATHS.messages, turn, (c) => deps.messages(c, c.var.body));
  app.post(PATHS.responses, turn, (c) => deps.responses(c, c.var.body));
  app.post(PATHS.countTokens, body, async (c) => {
    const result = parseJsonBytes(new Uint8Array(await c.req.arrayBuffer()));
    // CONTRACT.md §4.3: a body that fails to parse counts as 0, not an error.
    return c.json({ input_tokens: result.ok ? countTokens(result.value) : 0 });
  });
  app.get(
    PATHS.responses,
    (c, next) =>
      isWebSocketUpgrade(c.req.raw.headers)
        ? refuse(c, 426, WEBSOCKET_REFUSAL, { code: "websocket_not_served" })
        : next(),
  );
  // Codex reads `{"models": [...]}`; Claude Code's picker and the rest Anthropic's list.
  app.get(
    PATHS.models,
    (c) => c.json(isCodexModelsRequest(c.req.url, c.req.raw.headers) ? codexModels : models),
  );

  app.notFound((c) => refuse(c, 404, `not found: ${c.req.method} ${c.req.path}`));
  app.onError((err, c) => {
    log.error("{method} {path} failed: {error}", {
      method: c.req.method,
      path: c.req.path,
      error: err.message,
    });
    log.debug("stack: {stack}", { stack: err.stack ?? "" });
    return refuse(c, 500, "internal server error");
  });
  return app;
}
