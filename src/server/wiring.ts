/**
 * The wiring, in one place: config → agent runner → council → protocol handlers → limits → app
 * → serving, then the startup line; and a reload, which wires a new configuration the same way.
 */
import type { Logger } from "@logtape/logtape";
import { bindPolicyProblem } from "../config/bind_policy.ts";
import { type Clock, systemClock } from "../base/clock.ts";
import { type Config, ConfigError, isHttpRunner } from "../config/mod.ts";
import { moduleLogger } from "../base/log.ts";
import { interfaceAddresses, isWildcardHost, selfOriginsFor, urlHost } from "../base/origins.ts";
import { secrets } from "../base/redact.ts";
import type { ProtocolHandler } from "../protocol/protocol_handler.ts";
import { createMessagesHandler } from "../protocol/messages/handler.ts";
import { createResponsesHandler } from "../protocol/responses/handler.ts";
import { createAgentRunner, DEFAULT_KILL_GRACE_MS } from "../agents/run.ts";
import { createWarmPool, type WarmPool } from "../agents/warm_pool.ts";
import { describeGroupSpawn, machineGroupSpawn } from "../agents/process/group_spawn.ts";
import { GroupKeeper } from "../agents/process/group_keeper.ts";
import { recordDirectory } from "../agents/process/group_record.ts";
import { apiKeyVariables } from "../base/secret_variables.ts";
import type { RunAgent } from "../agents/types.ts";
import { createCouncil } from "../council/turn/turn.ts";
import type { TurnJournal } from "../council/journal.ts";
import { type Sessions, SessionStore } from "../council/session.ts";
import type { Team } from "../store/team.ts";
import { urlPassword } from "../store/url.ts";
import { dirname, join } from "node:path";
import { startIsolator } from "../workspace/startup.ts";
import { defaultWorkspaceRoot } from "../workspace/registry.ts";
import { LATENESS_FILE, latenessFile } from "../council/calls/lateness_file.ts";
import { openLedger } from "../ledger/mod.ts";
import { InFlightTurns } from "./inflight.ts";
import { StatusStore } from "../status/store.ts";
import { VERSION } from "../base/version.ts";
import { type AppLimits, createApp } from "./app.ts";
import { AUTH_THROTTLE_RULE, AuthThrottle } from "./middleware/auth_throttle.ts";
import { BodyBudget } from "./middleware/body_budget.ts";
import type { ConnectionLimits, ConnectionPhase } from "./connections.ts";
import { connectionCap, processFileLimit } from "./file_limit.ts";
import { serve } from "./serve.ts";
import { TurnSlots } from "./middleware/turn_slots.ts";
import { nextStepsLine, noAgentsLine, startupLine } from "./startup_lines.ts";

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
  /**
   * The process's file limit (default: asked of the system just after start), which may lower
   * the connection cap.
   */
  fileLimit?: number;
  /** Membership of a team on a shared database: sessions, ledger and keys live there. */
  team?: Team;
}

export interface RunningServer {
  addr: Deno.NetAddr;
  /** An origin a client on this machine can use, e.g. `http://127.0.0.1:6767`. */
  origin: string;
  /** Every origin this gateway answers on (see `selfOriginsFor`). */
  origins: readonly string[];
  /** Connections open now. */
  openConnections(): number;
  /** What each open connection waits for: a head, a body, a response, or the next request. */
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
  /** The live status the status API serves. */
  status: StatusStore;
  /**
   * Serves `config` from the next request on; turns already running keep theirs. The listener
   * stays where it is (host and port apply after a restart); limits apply at once.
   */
  reload(config: Readonly<Config>): void;
}

export const DEFAULT_GRACE_MS = 3000;
/** Longer than a cancelled child may take to end: SIGTERM→SIGKILL, then its pipes drain. */
const DEFAULT_ABORT_GRACE_MS = 2 * DEFAULT_KILL_GRACE_MS + 1000;

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The origins of a listener bound to `host` on `port`, and the one a local client should use. */
function listenerOrigins(host: string, port: number): { origin: string; origins: string[] } {
  const origins = selfOriginsFor(host, port, isWildcardHost(host) ? interfaceAddresses() : []);
  const origin = isWildcardHost(host)
    ? `http://${host.includes(":") ? "[::1]" : "127.0.0.1"}:${port}`
    : `http://${urlHost(host)}:${port}`;
  return { origin, origins };
}

/** What every configuration a reload brings shares, and what each one gets anew. */
interface Wiring {
  options: ServerOptions;
  log: Logger;
  clock: Clock;
  /** Shutdown waits for running turns to wind down (children killed, ledger line written). */
  inFlight: InFlightTurns;
  status: StatusStore;
  startedAt: Date;
  origins: string[];
  current: Readonly<Config>;
  limits: AppLimits & { connections: ConnectionLimits; fileLimit?: number };
  /** No CLI child outlives this gateway (made once a configuration has a CLI agent). */
  keeper?: GroupKeeper;
  /** One warm pool per configuration; a reload ends the previous one's waiting children. */
  pool?: WarmPool;
  /** Sessions (seeded from the ledger, which records every turn) and isolated workspaces. */
  shared?: {
    sessions: Sessions;
    journal?: TurnJournal;
    isolator: ReturnType<typeof startIsolator>;
  };
}

function keeperFor(w: Wiring, config: Readonly<Config>): GroupKeeper | undefined {
  const runners = [...config.defaultAgents, config.judge].flatMap((a) => a?.runner ?? []);
  if (!w.keeper && !w.options.runAgent && runners.some((runner) => !isHttpRunner(runner))) {
    w.keeper = new GroupKeeper({
      dir: recordDirectory(readEnv),
      graceMs: DEFAULT_KILL_GRACE_MS,
      log: w.log,
    });
  }
  return w.keeper;
}

/**
 * In the state directory, beside the isolated workspaces; none when there is no state directory
 * or the caller chose where workspaces go (tests: nothing is kept beyond the gateway's run).
 */
function latenessStoreFor(workspaceRoot: string | null | undefined) {
  if (workspaceRoot !== undefined) return undefined;
  const root = defaultWorkspaceRoot((name) => Deno.env.get(name));
  return root ? latenessFile(join(dirname(root), LATENESS_FILE)) : undefined;
}

/** What no child may see: the inbound token and the team database's password. */
export function gatewaySecrets(config: Readonly<Config>): string[] {
  if (!config.database) return config.token ? [config.token] : [];
  const pgPassword = Deno.env.get("PGPASSWORD");
  return [config.token, ...urlPassword(config.database), pgPassword]
    .filter((secret): secret is string => Boolean(secret));
}

/** The council for `config` behind both protocols. */
function protocolHandlers(w: Wiring, config: Readonly<Config>) {
  void w.pool?.shutdown();
  w.pool = w.options.runAgent ? undefined : createWarmPool(
    createAgentRunner({
      passApiKeys: config.passApiKeys,
      credentialVariables: apiKeyVariables([...config.defaultAgents, config.judge]),
      gatewaySecrets: gatewaySecrets(config),
      selfOrigins: () => w.origins,
      pricing: config.pricing,
      groups: keeperFor(w, config),
    }),
    config.warmPool,
    w.clock,
  );
  if (!w.shared) {
    // A session's worktrees are kept as long as the warm pool keeps children waiting in them:
    // longer, a slot would only spare making worktrees while holding a checkout's disk; shorter,
    // the children waiting there would lose their working directory.
    const keep = { idleMs: config.warmPool.idleMs, clock: w.clock };
    const isolator = startIsolator(w.options.workspaceRoot, w.log, keep);
    const { team } = w.options;
    const sessions = new SessionStore(config.sessionCapacity);
    w.shared = team ? { sessions: team.sessions, journal: team.journal, isolator } : {
      sessions,
      journal: config.ledger ? openLedger(config.ledger, sessions) : undefined,
      isolator,
    };
    // Seats cover the ledger's turns too, not only this process's.
    if (!team && config.ledger) w.status.preloadSeatsFrom(config.ledger);
  }
  const runAgent = w.options.runAgent ?? w.pool!.runner;
  const council = createCouncil({
    config,
    runAgent,
    clock: w.options.clock,
    ...w.shared,
    onTurnEnd: w.options.team?.onTurnEnd,
    observer: w.status,
    latenessStore: latenessStoreFor(w.options.workspaceRoot),
  });
  w.status.readHealthFrom(council.agentHealth);
  w.options.team?.shareHealth(council.agentHealth, council.adoptHealth);
  const deps = {
    runTurn: w.inFlight.wrap(council.runTurn),
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
    clock: w.options.clock,
  };
  return {
    messages: w.options.messages ?? createMessagesHandler(deps),
    responses: w.options.responses ?? createResponsesHandler(deps),
  };
}

/** One app per configuration: a turn runs to its end on the council it started with. */
function buildApp(w: Wiring, config: Readonly<Config>) {
  const { options } = w;
  return createApp({
    config,
    ...(options.messages && options.responses
      ? { messages: options.messages, responses: options.responses }
      : protocolHandlers(w, config)),
    limits: w.limits,
    team: options.team,
    logger: options.logger,
    startedAt: w.startedAt,
    origins: () => w.origins,
    status: {
      store: w.status,
      info: () => ({
        version: VERSION,
        startedAt: w.startedAt.getTime(),
        configPath: w.current.configPath,
      }),
      authOn: () => Boolean(w.current.token),
      team: options.team && (() => options.team!.status()),
      clock: options.clock,
    },
  });
}

/** Applies `config`'s limits to the ones every request shares (at start and on a reload). */
function applyLimits(w: Wiring, config: Readonly<Config>): void {
  const { limits } = w;
  limits.turns!.configure(config.maxConcurrentTurns, config.maxQueuedTurns);
  limits.bodies!.capacity = config.maxBodyBytesInFlight;
  const cap = connectionCap(config.maxConnections, limits.fileLimit);
  if (cap < config.maxConnections) {
    w.log.warn(
      "maxConnections lowered from {configured} to {cap}: the process may not open enough files " +
        "for more (raise `ulimit -n` to allow more)",
      { configured: config.maxConnections, cap },
    );
  }
  // The gate reads these live.
  Object.assign(limits.connections, {
    maxConnections: cap,
    headerTimeoutMs: config.headerTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
  });
}

function wiring(config: Readonly<Config>, options: ServerOptions): Wiring {
  const clock = options.clock ?? systemClock;
  return {
    options,
    log: options.logger ?? moduleLogger("server"),
    clock,
    inFlight: new InFlightTurns(),
    status: options.status ?? new StatusStore(clock),
    startedAt: options.startedAt ?? new Date(clock.now()),
    origins: [],
    current: config,
    limits: {
      turns: new TurnSlots({
        maxConcurrent: config.maxConcurrentTurns,
        maxQueued: config.maxQueuedTurns,
        clock,
      }),
      bodies: new BodyBudget(config.maxBodyBytesInFlight),
      authFailures: new AuthThrottle({ ...AUTH_THROTTLE_RULE, capacity: 10_000, clock }),
      connections: { ...config },
      fileLimit: options.fileLimit,
    },
  };
}

/** Wires the council and protocols for `config`, listens, and logs the startup line. */
export function startServer(config: Readonly<Config>, options: ServerOptions = {}): RunningServer {
  const problem = bindPolicyProblem(config);
  if (problem) throw new ConfigError(problem);
  // Whatever leaves the gateway (log, progress, answers, error replies) masks its token.
  secrets.add(config.token);
  const w = wiring(config, options);
  let app = buildApp(w, config);
  w.status.knowAgents(config.defaultAgents.map((agent) => agent.name));
  let serving: ReturnType<typeof serve>;
  try {
    serving = serve((request, env) => app.fetch(request, env), {
      host: config.host,
      port: config.port,
      limits: w.limits.connections,
      logger: w.log,
      clock: w.clock,
      graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
      abortGraceMs: options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS,
      idle: () => w.inFlight.idle(),
      onStopped: () =>
        Promise.resolve(w.pool?.shutdown()).then(() => w.shared?.isolator?.shutdown())
          .then(() => w.keeper?.close())
          .then(() => options.team?.close()),
      handleSignals: options.handleSignals,
    });
  } catch (err) {
    void w.keeper?.close().catch(() => {}); // its watchdog would keep the process alive
    throw err;
  }
  const reachable = listenerOrigins(config.host, serving.addr.port);
  w.origins = reachable.origins;
  logStart(w, config, serving.addr.port);
  applyLimits(w, config);
  if (options.fileLimit === undefined) {
    // Asked after the start line: the cap is lowered a moment later if the limit needs it.
    void processFileLimit().then((limit) => {
      w.limits.fileLimit = limit;
      if (limit !== undefined) applyLimits(w, w.current);
    });
  }
  return {
    ...serving,
    origin: reachable.origin,
    origins: w.origins,
    status: w.status,
    reload(next) {
      secrets.add(next.token);
      app = buildApp(w, next);
      w.current = next;
      applyLimits(w, next);
      w.status.knowAgents(next.defaultAgents.map((agent) => agent.name));
    },
  };
}

function logStart(w: Wiring, config: Readonly<Config>, port: number): void {
  const { log } = w;
  log.info(startupLine(config, port));
  log.info(nextStepsLine(config, port));
  if (config.defaultAgents.length === 0) log.warn(noAgentsLine());
  if (w.keeper) {
    log.debug("children get their process group through {how}; {watchdog}", {
      how: describeGroupSpawn(machineGroupSpawn()),
      watchdog: w.keeper.describe(),
    });
  }
  if (w.pool && config.warmPool.size > 0) {
    log.info("warm pool: {size} started child(ren) per agent and directory, at most {max}", {
      size: config.warmPool.size,
      max: config.warmPool.maxProcesses,
    });
  }
}
