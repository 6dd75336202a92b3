/**
 * The configuration's shape as zod schemas, with its defaults: top-level keys, pricing, and agent
 * entries as a union on `runner` in which each runner declares the fields it uses.
 */
import { z } from "zod";

/**
 * Runners that spawn a CLI: the agent CLIs, then any `command`. Only their names live here (the
 * configuration sits beneath the agents layer): each has its entry in the runner table,
 * agents/cli/runners.ts, which holds all else the gateway knows of it.
 */
const AGENT_CLIS = ["claude", "codex", "gemini", "opencode"] as const;
export const CLI_RUNNERS = [...AGENT_CLIS, "command"] as const;
/** Runners that call a model's HTTP API (a stateless completion, no CLI). */
export const HTTP_RUNNERS = ["anthropic", "openai"] as const;
export const RUNNERS = [...CLI_RUNNERS, ...HTTP_RUNNERS] as const;
export type Runner = (typeof RUNNERS)[number];
export type CliRunner = (typeof CLI_RUNNERS)[number];
export type HttpRunner = (typeof HTTP_RUNNERS)[number];

export function isHttpRunner(runner: Runner): runner is HttpRunner {
  return (HTTP_RUNNERS as readonly string[]).includes(runner);
}

export function isCliRunner(runner: Runner): runner is CliRunner {
  return (CLI_RUNNERS as readonly string[]).includes(runner);
}
const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
const FAN_OUT_POLICIES = ["always", "auto", "necessary", "never"] as const;
const FAN_OUT_SCOPES = ["first-turn", "every-turn"] as const;
const PROGRESS_DETAILS = ["telemetry", "interleaved"] as const;
/** What children may do to the workspace: look only, or also write (full-auto). */
const CHILD_ACCESS = ["read-only", "workspace-write"] as const;
export type ChildAccess = (typeof CHILD_ACCESS)[number];
/** Where fanned-out children that may write work: own copies, or all in the real workspace. */
const ISOLATION_MODES = ["worktree", "shared"] as const;
/** Fanned-out answer turns: the synthesizer may send one candidate as written, or always writes. */
const SYNTHESIS_MODES = ["pick-or-write", "write"] as const;

export const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * Why a value was refused where zod has no issue code of its own; errors.ts words each reason.
 * `unused`: the runner does not use the field; `required`: this runner needs it; `header name`
 * and `header value`: fetch's `Headers` refuses `header`'s name or value.
 */
export type IssueReason = "unused" | "required" | "header name" | "header value";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** Whether the platform's `Headers` (what fetch sends) accepts this header. */
function acceptsHeader(name: string, value: string): boolean {
  try {
    new Headers([[name, value]]);
    return true;
  } catch {
    return false;
  }
}

const HeadersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  for (const [header, value] of Object.entries(headers)) {
    const reason: IssueReason | undefined = !acceptsHeader(header, "x")
      ? "header name"
      : !acceptsHeader(header, value)
      ? "header value"
      : undefined;
    if (reason) {
      return ctx.addIssue({ code: "custom", message: reason, params: { reason, header } });
    }
  }
});

/** Every field an agent entry may have, in the order errors list them. */
const AGENT_FIELDS = {
  name: z.string().min(1).optional(),
  runner: z.enum(RUNNERS),
  model: z.string().min(1),
  /** CLI runners: the executable (default: the runner's CLI on PATH). */
  command: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().default(DEFAULT_TIMEOUT_MS),
  /** HTTP runners: API root, e.g. https://api.anthropic.com or http://localhost:11434/v1. */
  baseUrl: z.string().refine(isHttpUrl, "must be an http:// or https:// URL").optional(),
  /** HTTP runners: the gateway's environment variable holding the API key (never the key). */
  apiKeyEnv: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
  /** HTTP runners: extra request headers (e.g. OpenRouter's HTTP-Referer). */
  headers: HeadersSchema.optional(),
  maxTokens: z.number().int().positive().optional(),
  /** Most tokens of prompt sent to this agent (default: by model family, context_budget.ts). */
  contextTokens: z.number().int().positive().optional(),
};

/** A field the runner does not use: any value given is refused (typed as the others read it). */
function unused<T>() {
  return z.custom<T>(() => false, { params: { reason: "unused" satisfies IssueReason } });
}

/** An entry of a runner that must set `field`. */
function requiring<T extends z.ZodObject>(schema: T, field: keyof T["shape"] & string): T {
  return schema.superRefine((entry, ctx) => {
    if ((entry as Record<string, unknown>)[field] !== undefined) return;
    const reason: IssueReason = "required";
    ctx.addIssue({ code: "custom", path: [field], message: reason, params: { reason } });
  });
}

function cliEntry<const R extends readonly [CliRunner, ...CliRunner[]]>(runners: R) {
  return z.strictObject({
    ...AGENT_FIELDS,
    runner: z.enum(runners),
    baseUrl: unused<string>().optional(),
    apiKeyEnv: unused<string>().optional(),
    headers: unused<Record<string, string>>().optional(),
    maxTokens: unused<number>().optional(),
  });
}

function httpEntry<const R extends readonly [HttpRunner, ...HttpRunner[]]>(runners: R) {
  return z.strictObject({
    ...AGENT_FIELDS,
    runner: z.enum(runners),
    command: unused<string>().optional(),
    args: unused<string[]>().default([]),
    env: unused<Record<string, string>>().default({}),
  });
}

/** One `defaultAgents` entry: what a runner does not use is refused, what it needs required. */
export const AgentSchema = z.discriminatedUnion("runner", [
  cliEntry(AGENT_CLIS),
  requiring(cliEntry(["command"]), "command"),
  httpEntry(["anthropic"]),
  requiring(httpEntry(["openai"]), "baseUrl"),
]);
/** Names of the fields an agent entry may have. */
export const AGENT_FIELD_NAMES = Object.keys(AGENT_FIELDS);
/** An agent entry as configured (name may be absent). */
export type AgentEntry = z.infer<typeof AgentSchema>;
/** An agent entry after defaults: the display name is always set. */
export type AgentConfig = AgentEntry & { name: string };

/**
 * The judge: agent fields, all optional. What its runner allows is checked once the runner is
 * known (agent 0's when it names none; then it also inherits agent 0's endpoint or command).
 */
const JudgeSchema = z.strictObject(AGENT_FIELDS).partial({ runner: true, model: true });

export const PriceSchema = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  /** Input read from the provider's prompt cache (default: by model family, agents/cost.ts). */
  cacheRead: z.number().nonnegative().optional(),
  /** Input written to the provider's prompt cache (default: by model family). */
  cacheWrite: z.number().nonnegative().optional(),
});
export type Price = z.infer<typeof PriceSchema>;

const port = z.number().int().min(0).max(65535);

/** When a fanned-out turn stops waiting for its slowest children. */
export const QuorumSchema = z.strictObject({
  /** Usable answers after which stragglers get only a grace more (0 = wait for all). */
  minAnswers: z.number().int().nonnegative().default(2),
  /** The grace of an agent whose lateness behind the quorum is not yet known (council/lateness.ts). */
  graceMs: z.number().int().nonnegative().default(3000),
  /**
   * The longest grace an agent's usual lateness earns it; unset, `graceMs`: learning only
   * shortens the wait. Raise it to have the council wait for a member that is usually late.
   */
  maxGraceMs: z.number().int().nonnegative().optional(),
});

/**
 * How many CLI children wait for each agent, role, model and directory, and for how long unused.
 * The idle stretch outlasts a pause between a session's turns (reading an answer, writing the
 * next ask) and ends the pool's memory use soon after a session stops.
 */
export const WarmPoolSchema = z.strictObject({
  /** Children per key; 0 turns the pool off. */
  size: z.number().int().min(0).max(4).default(1),
  idleMs: z.number().int().positive().default(300_000),
  maxProcesses: z.number().int().positive().max(64).default(8),
});

/** When an agent that keeps failing is skipped, and for how long. */
export const HealthSchema = z.strictObject({
  /** Failed calls in a row that start a cool-down (0 = never skip an agent). */
  failures: z.number().int().nonnegative().default(2),
  cooldownMs: z.number().int().positive().default(60_000),
});

export const ConfigSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  port: port.default(6767),
  token: z.string().optional(),
  logLevel: z.enum(LOG_LEVELS).default("info"),
  logJson: z.boolean().default(false),
  streamProgress: z.boolean().default(true),
  progressDetail: z.enum(PROGRESS_DETAILS).default("telemetry"),
  fanOutPolicy: z.enum(FAN_OUT_POLICIES).default("auto"),
  fanOutScope: z.enum(FAN_OUT_SCOPES).default("first-turn"),
  maxTurns: z.number().int().positive().default(100),
  maxSessionUsd: z.number().nonnegative().default(0),
  sessionCapacity: z.number().int().positive().default(10_000),
  ledger: z.string().default(""),
  /**
   * A PostgreSQL URL (postgres://…): sessions, reservations, the ledger, agent health and
   * per-person keys live there, shared by every replica using it. Empty: memory and `ledger`.
   */
  database: z.string().default(""),
  /** How often a replica writes its heartbeat; one silent for three is reaped. */
  databaseHeartbeatMs: z.number().int().min(50).default(5_000),
  allowUnauthenticatedRemote: z.boolean().default(false),
  /** Extra host names the `Host` header may carry (DNS-rebinding guard), for remote binds. */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** Children work only in directories under these roots (empty: anywhere but system dirs). */
  workspaceRoots: z.array(z.string().min(1)).default([]),
  /** What children and the synthesizer may do on action turns (the host runs the tool). */
  childAccess: z.enum(CHILD_ACCESS).default("read-only"),
  /** Fanned-out answer turns: each child in its own worktree or copy, or all in the real cwd. */
  isolation: z.enum(ISOLATION_MODES).default("worktree"),
  synthesis: z.enum(SYNTHESIS_MODES).default("pick-or-write"),
  councilSize: z.number().int().positive().optional(),
  passApiKeys: z.boolean().default(false),
  heartbeatMs: z.number().int().positive().default(5000),
  telemetryMs: z.number().int().positive().default(2000),
  keepAliveMs: z.number().int().positive().default(3000),
  maxBodyBytes: z.number().int().positive().default(32 * 1024 * 1024),
  /** Decoded bytes one image may have: Anthropic's own API refuses larger ones. */
  maxImageBytes: z.number().int().positive().default(5 * 1024 * 1024),
  /** Decoded bytes of all images and documents of one request together. */
  maxAttachmentBytes: z.number().int().positive().default(20 * 1024 * 1024),
  /** Images and documents one request may carry: Anthropic's own API takes 100. */
  maxAttachments: z.number().int().positive().default(100),
  /** Fetch URL image and document sources (otherwise passed on as URLs where a child takes one). */
  fetchAttachmentUrls: z.boolean().default(false),
  /** Request bodies in flight at once, in bytes (more → 429); see src/server/middleware/body_budget.ts. */
  maxBodyBytesInFlight: z.number().int().positive().default(64 * 1024 * 1024),
  /** Council turns running at once; more wait in a queue of `maxQueuedTurns`, then 429. */
  maxConcurrentTurns: z.number().int().positive().default(4),
  maxQueuedTurns: z.number().int().nonnegative().default(32),
  /** Open client connections (lowered to what the process's file limit allows). */
  maxConnections: z.number().int().positive().default(256),
  /** A request's head must arrive within this (from the connection or its first byte). */
  headerTimeoutMs: z.number().int().positive().default(10_000),
  /** A request's body must arrive within this, from the end of its head. */
  bodyTimeoutMs: z.number().int().positive().default(60_000),
  /** A connection with no request in flight is closed after this. */
  idleTimeoutMs: z.number().int().positive().default(120_000),
  quorum: QuorumSchema.prefault({}),
  health: HealthSchema.prefault({}),
  /** Upstream retries a child may announce before it is cut off (a vendor failing). */
  maxUpstreamRetries: z.number().int().nonnegative().default(2),
  judge: JudgeSchema.optional(),
  defaultAgents: z.array(AgentSchema).min(1).optional(),
  pricing: z.record(z.string(), PriceSchema).default({}),
  /** CLI children started ahead of their turn: `on`, `off` or settings; see agents/warm_pool.ts. */
  warmPool: z.union([z.enum(["on", "off"]), WarmPoolSchema]).default("on").transform((pool) =>
    pool === "off"
      ? WarmPoolSchema.parse({ size: 0 })
      : WarmPoolSchema.parse(pool === "on" ? {} : pool)
  ),
});
export type ConfigFile = z.input<typeof ConfigSchema>;

/** The effective, frozen configuration every module reads. */
export interface Config extends Omit<z.infer<typeof ConfigSchema>, "defaultAgents" | "judge"> {
  /** Where the file came from, or null when none was found. */
  configPath: string | null;
  /** Never empty after `resolveAgents`; may be empty when no CLI was found on PATH. */
  defaultAgents: AgentConfig[];
  judge?: Partial<AgentEntry>;
  /** Number of children for a fanned-out turn. */
  councilSize: number;
  /** Where `defaultAgents` came from: the configuration, or discovery on PATH. */
  agentsSource?: "config" | "path";
}
