/**
 * Serving: the public listener and its gate (connections.ts) in front of `Deno.serve`, which
 * listens on a private Unix socket; their lifecycle, and graceful shutdown.
 */
import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import { type Clock, systemClock, type TimerId } from "../base/clock.ts";
import { urlHost } from "../base/origins.ts";
import { oncePerBurst } from "./signal_burst.ts";
import type { RequestEnv } from "./app.ts";
import { errorReply, protocolOfPath } from "../protocol/error_envelope.ts";
import {
  CONNECTION_HEADER,
  type ConnectionLimits,
  type ConnectionPhase,
  Gate,
} from "./connections.ts";

/** A listen failure (address in use, permission): a runtime error, exit 1 at the CLI. */
export class ListenError extends Error {
  override name = "ListenError";
}

type FetchApp = (request: Request, env: RequestEnv) => Response | Promise<Response>;

interface ServeOptions {
  host: string;
  port: number;
  limits: ConnectionLimits;
  logger: Logger;
  clock?: Clock;
  /** How long in-flight requests may finish on their own after a shutdown starts. */
  graceMs: number;
  /** After in-flight turns are cancelled, how long to wait for them before giving up. */
  abortGraceMs: number;
  /** Resolves once the work behind finished requests has wound down (turns killing children). */
  idle: () => Promise<void>;
  /** Runs once the server has stopped, before it says so (e.g. ending what children are left). */
  onStopped?: () => unknown;
  /** Install SIGINT/SIGTERM handlers (the CLI does; tests usually do not). */
  handleSignals?: boolean;
}

interface Serving {
  addr: Deno.NetAddr;
  /** Connections open now. */
  openConnections(): number;
  /** What each open connection waits for (see connections.ts). */
  connectionPhases(): ConnectionPhase[];
  /**
   * Aborted when shutdown gives up waiting: in-flight turns observe it (it is part of every
   * request's `signal`) and kill their children.
   */
  signal: AbortSignal;
  /** Settles when the server has stopped. */
  finished: Promise<void>;
  /** Starts a graceful shutdown (a second call cancels in-flight turns at once). */
  shutdown(): Promise<void>;
}

function listen(host: string, port: number): Deno.Listener {
  try {
    return Deno.listen({ hostname: host, port });
  } catch (err) {
    const reason = err instanceof Deno.errors.AddrInUse
      ? "address already in use"
      : err instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : (err as Error).message;
    throw new ListenError(`cannot listen on ${urlHost(host)}:${port}: ${reason}`);
  }
}

/**
 * `Deno.serve` behind the gate, on a Unix socket in a directory only this user can enter (on
 * Windows, a loopback port). If its accept loop ever fails (it ends on an accept error), a new
 * one is started, so the gateway keeps serving.
 */
class Backend {
  server!: Deno.HttpServer;
  #servers: Deno.HttpServer[] = [];
  #dir = Deno.build.os === "windows" ? undefined : Deno.makeTempDirSync({ prefix: "council-gw-" });
  #generation = 0;
  #stopping = false;
  #handler: Deno.ServeHandler;
  #log: Logger;
  #clock: Clock;

  constructor(handler: Deno.ServeHandler, log: Logger, clock: Clock) {
    this.#handler = handler;
    this.#log = log;
    this.#clock = clock;
    this.#start();
  }

  connect(): Promise<Deno.Conn> {
    const addr = this.server.addr;
    return addr.transport === "unix"
      ? Deno.connect({ transport: "unix", path: addr.path })
      : Deno.connect({ hostname: "127.0.0.1", port: (addr as Deno.NetAddr).port });
  }

  /**
   * Stops accepting and lets open requests finish; settles once the server (and any earlier one
   * whose accept loop failed, with the connections it still serves) has stopped.
   */
  async shutdown(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#servers.map(async (server) => {
      await server.shutdown().catch(() => {});
      await server.finished.catch(() => {});
    }));
  }

  cleanUp(): void {
    try {
      if (this.#dir) Deno.removeSync(this.#dir, { recursive: true });
    } catch { /* already gone */ }
  }

  #start(): void {
    const options = { onListen: () => {}, onError: internalError(this.#log) };
    const server = this.#dir
      ? Deno.serve(
        { ...options, path: join(this.#dir, `http-${this.#generation++}.sock`) },
        this.#handler,
      )
      : Deno.serve({ ...options, hostname: "127.0.0.1", port: 0 }, this.#handler);
    this.server = server;
    this.#servers.push(server);
    server.finished.catch((error) => {
      if (this.#stopping || this.server !== server) return;
      this.#log.error("the HTTP server stopped accepting ({error}); starting it again", {
        error: (error as Error)?.message ?? String(error),
      });
      this.#restart();
    });
  }

  #restart(): void {
    try {
      this.#start();
    } catch (error) {
      this.#log.warn("restarting the HTTP server failed ({error}); trying again", {
        error: (error as Error).message,
      });
      this.#clock.setTimeout(() => this.#restart(), 1000);
    }
  }
}

/**
 * The request's URL as the client addressed it: from its `Host`, or without one (HTTP/1.0) from
 * the public listener's address rather than the private socket's.
 */
function publicUrl(request: Request, listener: Deno.NetAddr): string {
  if (request.headers.has("host")) return request.url;
  const url = new URL(request.url);
  return `http://${urlHost(listener.hostname)}:${listener.port}${url.pathname}${url.search}`;
}

function internalError(log: Logger) {
  return (err: unknown) => {
    log.error("request failed: {error}", { error: (err as Error)?.message ?? String(err) });
    return errorReply("unknown", 500, "internal server error");
  };
}

function startBackend(
  handler: Deno.ServeHandler,
  log: Logger,
  clock: Clock,
  listener: Deno.Listener,
): Backend {
  try {
    return new Backend(handler, log, clock);
  } catch (err) {
    listener.close();
    throw new ListenError(`cannot start the HTTP server: ${(err as Error).message}`);
  }
}

/** Listens on `host:port` and serves `app` until shut down. */
export function serve(app: FetchApp, options: ServeOptions): Serving {
  const log = options.logger;
  const clock = options.clock ?? systemClock;
  const listener = listen(options.host, options.port);
  const stopping = new AbortController();
  const handler: Deno.ServeHandler = (request, info) => {
    const connection = gate.lookup(request.headers.get(CONNECTION_HEADER));
    if (!connection) {
      // Only the gate connects here, and it names every request's connection.
      const path = new URL(request.url).pathname;
      const reply = errorReply(protocolOfPath(path), 400, "unknown connection");
      reply.headers.set("connection", "close");
      return reply;
    }
    const done = () => connection.responseDone();
    info.completed.then(done, done);
    const headers = new Headers(request.headers);
    headers.delete(CONNECTION_HEADER);
    // Every request's signal also fires on shutdown, so turns can kill their children.
    const signal = AbortSignal.any([request.signal, stopping.signal]);
    const init = { method: request.method, headers, body: request.body, signal, duplex: "half" };
    return app(new Request(publicUrl(request, gate.addr), init as RequestInit), {
      completed: info.completed,
      peer: connection.peer,
    });
  };
  const backend = startBackend(handler, log, clock, listener);
  const gate = new Gate({
    listener,
    connectUpstream: () => backend.connect(),
    limits: options.limits,
    clock,
    log,
  });
  return lifecycle({ gate, backend, stopping, clock, log, options });
}

interface Parts {
  gate: Gate;
  backend: Backend;
  stopping: AbortController;
  clock: Clock;
  log: Logger;
  options: ServeOptions;
}

/** Shutdown in two phases: drain (no new connections, requests finish), then cancel. */
function lifecycle({ gate, backend, stopping, clock, log, options }: Parts): Serving {
  let phase: "running" | "draining" | "aborting" = "running";
  const timers: TimerId[] = [];
  let giveUp!: () => void;
  const gaveUp = new Promise<void>((resolve) => (giveUp = resolve));
  // After the server stopped, a late signal must not fall back to the default action (exit 143)
  // while the process winds down, so the listeners are kept and simply do nothing then.
  let stopped = false;
  let drained: Promise<unknown> | undefined;
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));

  const cancelInFlight = () => {
    if (phase === "aborting") return;
    phase = "aborting";
    log.info("shutting down: cancelling in-flight turns");
    stopping.abort(new Error("server shutting down"));
    timers.push(clock.setTimeout(() => {
      log.warn("shutting down: in-flight requests did not end within {ms} ms", {
        ms: options.abortGraceMs,
      });
      giveUp();
    }, options.abortGraceMs));
  };

  function shutdown(): Promise<void> {
    if (phase !== "running") {
      cancelInFlight();
      return finished;
    }
    phase = "draining";
    log.info("shutting down: no new connections; in-flight requests have {ms} ms", {
      ms: options.graceMs,
    });
    gate.stopAccepting();
    // The HTTP server ends its side of every connection; each then relays what is left and ends.
    drained = backend.shutdown().then(() => Promise.all([options.idle(), gate.drained()]));
    gate.closeConnections("idle");
    timers.push(clock.setTimeout(cancelInFlight, options.graceMs));
    Promise.race([drained, gaveUp]).then(() => options.onStopped?.()).finally(() => {
      for (const id of timers) clock.clearTimeout(id);
      gate.closeConnections("all");
      backend.cleanUp();
      stopped = true;
      log.info("stopped");
      resolveFinished();
    });
    return finished;
  }

  if (options.handleSignals) {
    const onSignal = () => {
      if (!stopped) void shutdown();
    };
    const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
    const once = oncePerBurst(onSignal, clock);
    for (const sig of signals) Deno.addSignalListener(sig, once);
  }

  return {
    addr: gate.addr,
    openConnections: () => gate.open,
    connectionPhases: () => gate.phases(),
    signal: stopping.signal,
    finished,
    shutdown,
  };
}
