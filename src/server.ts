/**
 * The HTTP server: a Hono app (recursion guard, auth, routing, body limits, error envelopes) and
 * its `Deno.serve` lifecycle with graceful shutdown.
 */
import { type Context, Hono } from "hono";
import type { Logger } from "@logtape/logtape";
import { bindPolicyProblem, createTokenCheck } from "./auth.ts";
import { whenBodyEnds } from "./body_end.ts";
import { type Clock, systemClock, type TimerId } from "./clock.ts";
import { type Config, ConfigError, isHttpRunner } from "./config.ts";
import { moduleLogger } from "./log.ts";
import { interfaceAddresses, isWildcardHost, selfOriginsFor, urlHost } from "./origins.ts";
import { redact, secrets } from "./redact.ts";
import {
  type HostRule,
  hostRule,
  type Refuse,
  requireJsonBody,
  requireKnownHost,
  requireLoopbackOrigin,
} from "./guard.ts";
import { listModels } from "./models.ts";
import { countTokens } from "./protocol/count_tokens.ts";
import type { ProtocolHandler } from "./protocol/handler.ts";
import { createMessagesHandler } from "./protocol/messages/handler.ts";
import { createResponsesHandler } from "./protocol/responses/handler.ts";
import { createAgentRunner, DEFAULT_KILL_GRACE_MS } from "./agents/run.ts";
import { createWarmPool, type WarmPool } from "./agents/warm_pool.ts";
import { describeGroupSpawn, machineGroupSpawn } from "./agents/group_spawn.ts";
import { GroupKeeper } from "./agents/group_keeper.ts";
import { recordDirectory } from "./agents/group_record.ts";
import { COUNCIL_DEPTH_HEADER } from "./agents/env.ts";
import { apiKeyVariables } from "./secret_variables.ts";
import type { RunAgent } from "./agents/types.ts";
import { createCouncil } from "./council/turn.ts";
import { startIsolator } from "./workspace/startup.ts";
import type { TurnJournal } from "./council/journal.ts";
import { SessionStore } from "./council/session.ts";
import { openLedger } from "./ledger.ts";
import { InFlightTurns } from "./inflight.ts";
import {
  mountPublicStatusRoutes,
  mountStatusRoutes,
  type StatusRoutesDeps,
} from "./status/routes.ts";
import { StatusStore } from "./status/store.ts";
import { VERSION } from "./version.ts";
import { oncePerBurst } from "./signal_burst.ts";

/** Set by the agents layer on every child; a request carrying it came from our own child. */
export const DEPTH_HEADER = COUNCIL_DEPTH_HEADER;
export const RECURSION_MESSAGE = "recursive call from a council child";

/** The four endpoints of SPEC §4. */
export const PATHS = {
  messages: "/v1/messages",
  responses: "/v1/responses",
  countTokens: "/v1/messages/count_tokens",
  models: "/v1/models",
} as const;

/** Anthropic error envelope `{type:"error", error:{type, message}}` (SPEC §2.3). */
export function errorEnvelope(type: string, message: string) {
  return { type: "error", error: { type, message: redact(message) } } as const;
}

/** OpenAI error shape, used for request errors on `/v1/responses`. */
/** OpenAI's error shape, plus SPEC §2.3's top-level `type: "error"` (clients ignore it). */
export function openAiError(type: string, message: string, code: string | null = null) {
  return { type: "error", error: { message: redact(message), type, param: null, code } } as const;
}

type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; status: 400 | 413; message: string };

function tooLarge(maxBytes: number): BodyResult {
  return { ok: false, status: 413, message: `request body exceeds ${maxBytes} bytes` };
}

/**
 * Reads the body, counting bytes as they arrive so a missing or lying content-length cannot
 * get more than `maxBytes` into memory, then parses it as JSON.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    return tooLarge(maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        return tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, status: 400, message: "request body is not valid UTF-8" };
  }
  if (text.trim() === "") return { ok: false, status: 400, message: "request body is empty" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const detail = (err as Error).message.slice(0, 200);
    return { ok: false, status: 400, message: `request body is not valid JSON: ${detail}` };
  }
}

export interface AppDeps {
  config: Readonly<Config>;
  messages: ProtocolHandler;
  responses: ProtocolHandler;
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

const COUNCIL_PATHS: ReadonlySet<string> = new Set([PATHS.messages, PATHS.responses]);

/** Builds the Hono app. Routing ignores query strings (Claude Code posts `?beta=true`). */
export function createApp(deps: AppDeps): Hono {
  const { config } = deps;
  const log = deps.logger ?? moduleLogger("server");
  const isAuthorized = createTokenCheck(config.token);
  const models = listModels(config.defaultAgents, deps.startedAt ?? new Date());
  const app = new Hono();
  const ownOrigins = deps.origins ?? (() => []);
  let ownHostsFor: { origins: readonly string[]; rule: HostRule } | undefined;
  const ownHosts = () => {
    const origins = ownOrigins();
    if (ownHostsFor?.origins !== origins) {
      ownHostsFor = { origins, rule: hostRule(origins, [config.host, ...config.allowedHosts]) };
    }
    return ownHostsFor.rule;
  };
  const refuse: Refuse = (c, status, type, message) =>
    c.req.path === PATHS.responses
      ? c.json(openAiError(type, message), status)
      : c.json(errorEnvelope(type, message), status);

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    const status = c.res.status;
    const line = () => {
      const fields = {
        method: c.req.method,
        path: c.req.path,
        status,
        ms: Math.round(performance.now() - started),
      };
      if (status >= 500) log.error("{method} {path} {status} {ms}ms", fields);
      else if (status >= 400 || COUNCIL_PATHS.has(c.req.path)) {
        log.info("{method} {path} {status} {ms}ms", fields);
      } else log.debug("{method} {path} {status} {ms}ms", fields);
    };
    // A streamed turn is logged when its stream ends, with the turn's real duration.
    const streamed = c.res.headers.get("content-type")?.startsWith("text/event-stream");
    if (streamed) c.res = whenBodyEnds(c.res, line);
    else line();
  });

  app.use("*", requireKnownHost(ownHosts, refuse), requireLoopbackOrigin(refuse));
  if (deps.status) mountPublicStatusRoutes(app, deps.status);

  app.use("*", async (c, next) => {
    if (c.req.header(DEPTH_HEADER) !== undefined) {
      log.warn("refused a request from a council child ({header} header)", {
        header: DEPTH_HEADER,
      });
      return c.req.path === PATHS.responses
        ? c.json(openAiError("invalid_request_error", RECURSION_MESSAGE), 400)
        : c.json(errorEnvelope("invalid_request_error", RECURSION_MESSAGE), 400);
    }
    if (!isAuthorized(c.req.raw.headers)) {
      return c.json(errorEnvelope("authentication_error", "unauthorized"), 401);
    }
    await next();
  });

  // Hono answers HEAD with the GET route; SPEC §4 allows only the four method/path pairs.
  app.use("*", (c, next) => c.req.raw.method === "HEAD" ? Promise.resolve(c.notFound()) : next());
  if (deps.status) mountStatusRoutes(app, deps.status);

  const body = async (
    c: Context,
    handler: ProtocolHandler,
    shape: "anthropic" | "openai",
  ): Promise<Response> => {
    const result = await readJsonBody(c.req.raw, config.maxBodyBytes);
    if (result.ok) return handler(c, result.value);
    const type = result.status === 413 ? "request_too_large" : "invalid_request_error";
    return shape === "openai"
      ? c.json(openAiError("invalid_request_error", result.message, type), result.status)
      : c.json(errorEnvelope(type, result.message), result.status);
  };

  for (const path of [PATHS.messages, PATHS.responses, PATHS.countTokens]) {
    app.post(path, requireJsonBody(refuse));
  }
  app.post(PATHS.messages, (c) => body(c, deps.messages, "anthropic"));
  app.post(PATHS.responses, (c) => body(c, deps.responses, "openai"));
  app.post(PATHS.countTokens, async (c) => {
    const result = await readJsonBody(c.req.raw, config.maxBodyBytes);
    if (!result.ok && result.status === 413) {
      return c.json(errorEnvelope("request_too_large", result.message), 413);
    }
    // SPEC §4.3: a body that fails to parse counts as 0, not an error.
    return c.json({ input_tokens: result.ok ? countTokens(result.value) : 0 });
  });
  app.get(PATHS.models, (c) => c.json(models));

  app.notFound((c) =>
    c.json(errorEnvelope("not_found_error", `not found: ${c.req.method} ${c.req.path}`), 404)
  );
  app.onError((err, c) => {
    log.error("{method} {path} failed: {error}", {
      method: c.req.method,
      path: c.req.path,
      error: err.message,
    });
    log.debug("stack: {stack}", { stack: err.stack ?? "" });
    return c.json(errorEnvelope("api_error", "internal server error"), 500);
  });
  return app;
}

/** A listen failure (address in use, permission): a runtime error, exit 1 at the CLI. */
export class ListenError extends Error {
  override name = "ListenError";
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The startup line of DESIGN.md "External interface". */
export function startupLine(config: Readonly<Config>, port: number): string {
  const agents = config.defaultAgents.map((a) => `${a.name}:${a.model}`).join(",") || "none";
  return `listening on http://${urlHost(config.host)}:${port} ` +
    `(${PATHS.messages}, ${PATHS.responses}) ` +
    `fanOutPolicy=${config.fanOutPolicy} fanOutScope=${config.fanOutScope} ` +
    `maxTurns=${config.maxTurns} auth=${config.token ? "on" : "off"} ` +
    `streamProgress=${config.streamProgress} progressDetail=${config.progressDetail} ` +
    `logLevel=${config.logLevel} agents=${agents} config=${config.configPath ?? "defaults"}`;
}

export interface ServerOptions {
  /** Protocol handlers; default: the real council behind the real protocols. */
  messages?: ProtocolHandler;
  responses?: ProtocolHandler;
  /** Agent runner for the default wiring (tests inject fakes). */
  runAgent?: RunAgent;
  logger?: Logger;
  clock?: Clock;
  /** How long in-flight requests may finish on their own after a shutdown starts. */
  graceMs?: number;
  /** After in-flight turns are cancelled, how long to wait for them before giving up. */
  abortGraceMs?: number;
  /** Install SIGINT/SIGTERM handlers (the CLI does; tests usually do not). */
  handleSignals?: boolean;
  startedAt?: Date;
  /** Where isolated workspaces are kept (default: the user's state dir; null: none). */
  workspaceRoot?: string | null;
  /** The status store to serve (default: a new one). */
  status?: StatusStore;
}

export interface RunningServer {
  addr: Deno.NetAddr;
  /** An origin a client on this machine can use, e.g. `http://127.0.0.1:6767`. */
  origin: string;
  /** Every origin this gateway answers on (see `selfOriginsFor`). */
  origins: readonly string[];
  /**
   * Aborted when shutdown gives up waiting: in-flight turns observe it (it is part of every
   * request's `signal`) and kill their children.
   */
  signal: AbortSignal;
  /** Settles when the server has stopped. */
  finished: Promise<void>;
  /** Starts a graceful shutdown (a second call cancels in-flight turns at once). */
  shutdown(): Promise<void>;
  /** The live status the status API serves. */
  status: StatusStore;
  /**
   * Serves `config` from the next request on; turns already running keep theirs. The listener
   * stays where it is (host and port apply after a restart).
   */
  reload(config: Readonly<Config>): void;
}

export const DEFAULT_GRACE_MS = 3000;
/** Longer than a cancelled child may take to end: SIGTERM→SIGKILL, then its pipes drain. */
export const DEFAULT_ABORT_GRACE_MS = 2 * DEFAULT_KILL_GRACE_MS + 1000;

/** Wires the council and protocols for `config`, listens, and logs the startup line. */
export function startServer(config: Readonly<Config>, options: ServerOptions = {}): RunningServer {
  const problem = bindPolicyProblem(config);
  if (problem) throw new ConfigError(problem);
  // Whatever leaves the gateway (log, progress, answers, error replies) masks its token.
  secrets.add(config.token);
  const log = options.logger ?? moduleLogger("server");
  const clock = options.clock ?? systemClock;
  let origins: string[] = [];
  // Shutdown waits for running turns to wind down (children killed, ledger line written).
  const inFlight = new InFlightTurns();

  // No CLI child outlives this gateway, however it ends (see agents/group_keeper.ts). Made when
  // a configuration first has a CLI agent (at start, or a reload that brings one).
  let keeper: GroupKeeper | undefined;
  const keeperFor = (config: Readonly<Config>) => {
    const runners = [...config.defaultAgents, config.judge].flatMap((a) => a?.runner ?? []);
    if (!keeper && !options.runAgent && runners.some((runner) => !isHttpRunner(runner))) {
      keeper = new GroupKeeper({
        dir: recordDirectory(readEnv),
        graceMs: DEFAULT_KILL_GRACE_MS,
        log,
      });
    }
    return keeper;
  };

  // Shared by every configuration a reload brings: sessions (seeded from the ledger, which
  // records every finished turn) and the live status.
  const status = options.status ?? new StatusStore(clock);
  const startedAt = options.startedAt ?? new Date(clock.now());
  let shared:
    | { sessions: SessionStore; journal?: TurnJournal; isolator: ReturnType<typeof startIsolator> }
    | undefined;
  // One warm pool per configuration; a reload ends the previous one's waiting children.
  let pool: WarmPool | undefined;
  const handlers = (config: Readonly<Config>) => {
    void pool?.shutdown();
    pool = options.runAgent ? undefined : createWarmPool(
      createAgentRunner({
        passApiKeys: config.passApiKeys,
        credentialVariables: apiKeyVariables([...config.defaultAgents, config.judge]),
        gatewayToken: config.token,
        selfOrigins: () => origins,
        pricing: config.pricing,
        groups: keeperFor(config),
      }),
      config.warmPool,
      clock,
    );
    const runAgent = options.runAgent ?? pool!.runner;
    // With a ledger, sessions start from its counters and each turn's start, calls and end are
    // appended; isolated workspaces live in one registry (swept of a crashed gateway's at start).
    if (!shared) {
      const sessions = new SessionStore(config.sessionCapacity);
      shared = {
        sessions,
        journal: config.ledger ? openLedger(config.ledger, sessions) : undefined,
        isolator: startIsolator(options.workspaceRoot, log),
      };
    }
    const council = createCouncil({
      config,
      runAgent,
      clock: options.clock,
      ...shared,
      observer: status,
    });
    const deps = {
      runTurn: inFlight.wrap(council.runTurn),
      streamProgress: config.streamProgress,
      keepAliveMs: config.keepAliveMs,
      passApiKeys: config.passApiKeys,
      gatewayToken: config.token,
      workspace: { workspaceRoots: config.workspaceRoots },
      attachments: {
        maxImageBytes: config.maxImageBytes,
        maxAttachmentBytes: config.maxAttachmentBytes,
        maxAttachments: config.maxAttachments,
        fetchUrls: config.fetchAttachmentUrls,
      },
      clock: options.clock,
    };
    return {
      messages: options.messages ?? createMessagesHandler(deps),
      responses: options.responses ?? createResponsesHandler(deps),
    };
  };
  let current = config;
  // One app per configuration: a turn runs to its end on the council it started with.
  const buildApp = (config: Readonly<Config>) =>
    createApp({
      config,
      ...(options.messages && options.responses
        ? { messages: options.messages, responses: options.responses }
        : handlers(config)),
      logger: options.logger,
      startedAt,
      origins: () => origins,
      status: {
        store: status,
        info: () => ({
          version: VERSION,
          startedAt: startedAt.getTime(),
          configPath: current.configPath,
        }),
        authOn: () => Boolean(current.token),
        clock: options.clock,
      },
    });
  let app = buildApp(config);
  status.knowAgents(config.defaultAgents.map((agent) => agent.name));

  const stopping = new AbortController();
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: config.host,
      port: config.port,
      onListen: () => {},
      onError: (err) => {
        log.error("request failed: {error}", { error: (err as Error)?.message ?? String(err) });
        return Response.json(errorEnvelope("api_error", "internal server error"), {
          status: 500,
        });
      },
    }, (request, info) => {
      // Every request's signal also fires on shutdown, so turns can kill their children.
      const signal = AbortSignal.any([request.signal, stopping.signal]);
      return app.fetch(new Request(request, { signal }), { info });
    });
  } catch (err) {
    void keeper?.close().catch(() => {}); // its watchdog would keep the process alive
    const reason = err instanceof Deno.errors.AddrInUse
      ? "address already in use"
      : err instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : (err as Error).message;
    throw new ListenError(`cannot listen on ${urlHost(config.host)}:${config.port}: ${reason}`);
  }

  const port = server.addr.port;
  origins = selfOriginsFor(
    config.host,
    port,
    isWildcardHost(config.host) ? interfaceAddresses() : [],
  );
  const origin = isWildcardHost(config.host)
    ? `http://${config.host.includes(":") ? "[::1]" : "127.0.0.1"}:${port}`
    : `http://${urlHost(config.host)}:${port}`;

  log.info(startupLine(config, port));
  if (config.defaultAgents.length === 0) {
    log.warn(
      "no agents: defaultAgents is not configured and no claude, codex or gemini CLI was " +
        "found on PATH; every turn will answer with an error until one is",
    );
  }
  if (config.configPath) log.debug("config file {path}", { path: config.configPath });
  if (keeper) {
    log.debug("children get their process group through {how}; {watchdog}", {
      how: describeGroupSpawn(machineGroupSpawn()),
      watchdog: keeper.describe(),
    });
  }

  let phase: "running" | "draining" | "aborting" = "running";
  const timers: TimerId[] = [];
  let giveUp!: () => void;
  const gaveUp = new Promise<void>((resolve) => (giveUp = resolve));
  // After the server stopped, a late signal must not fall back to the default action (exit 143)
  // while the process winds down, so the listeners are kept and simply do nothing then.
  let stopped = false;
  const onSignal = () => {
    if (!stopped) void shutdown();
  };

  const drained = server.finished.then(() => inFlight.idle());
  const finished = Promise.race([drained, gaveUp]).then(() => pool?.shutdown()).then(() =>
    keeper?.close()
  ).finally(() => {
    for (const id of timers) clock.clearTimeout(id);
    stopped = true;
    log.info("stopped");
  });

  const cancelInFlight = () => {
    if (phase === "aborting") return;
    phase = "aborting";
    log.info("shutting down: cancelling in-flight turns");
    stopping.abort(new Error("server shutting down"));
    const abortGraceMs = options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
    timers.push(clock.setTimeout(() => {
      log.warn("shutting down: in-flight requests did not end within {ms} ms", {
        ms: abortGraceMs,
      });
      giveUp();
    }, abortGraceMs));
  };

  function shutdown(): Promise<void> {
    if (phase === "running") {
      phase = "draining";
      const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
      log.info("shutting down: no new connections; in-flight requests have {ms} ms", {
        ms: graceMs,
      });
      server.shutdown().catch(() => {});
      timers.push(clock.setTimeout(cancelInFlight, graceMs));
    } else {
      cancelInFlight();
    }
    return finished;
  }

  // Only the CLI installs these: it exits the process right after `finished` settles.
  if (options.handleSignals) {
    const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    const once = oncePerBurst(onSignal, clock);
    for (const sig of signals) Deno.addSignalListener(sig, once);
  }

  return {
    addr: server.addr,
    origin,
    origins,
    signal: stopping.signal,
    finished,
    shutdown,
    status,
    reload(next) {
      secrets.add(next.token);
      app = buildApp(next);
      current = next;
      status.knowAgents(next.defaultAgents.map((agent) => agent.name));
    },
  };
}
