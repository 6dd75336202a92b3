/**
 * Neutral types of the agents layer: what running one child produces.
 *
 * The council imports these; nothing here knows about councils, HTTP or protocols.
 */
import type { AgentConfig, ChildAccess, HttpRunner, Price } from "../config/mod.ts";
import type { LabelledAttachment } from "../base/attachment.ts";
import type { StateHomeSpec } from "./cli/state_home.ts";

export type { ChildAccess };

/** What a child is asked to do; adapters may shape argv by it (e.g. no tools for a judge). */
export type AgentRole = "child" | "synth" | "judge";

/** Token counts and cost of one child run. */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** True when cost (or tokens) were estimated rather than reported by the CLI. */
  estimated: boolean;
  /** Of the input tokens, those read from the provider's prompt cache (when reported). */
  cacheReadTokens?: number;
  /** Of the input tokens, those written to the provider's prompt cache (when reported). */
  cacheWriteTokens?: number;
}

/** One thing a child did or said while running. */
export type AgentEvent =
  | { type: "started"; agent: string; model: string; pid?: number }
  /**
   * A piece of the child's text, as it streams. Concatenated, these may hold narration from
   * before tool calls; `AgentResult.text` is the CLI's own final answer when it reports one.
   */
  | { type: "text"; agent: string; text: string }
  /** A human-readable action such as "Read notes.txt" or "$ ls -la". */
  | { type: "activity"; agent: string; text: string }
  /** Running counters (absolute, not increments) for telemetry. */
  | { type: "usage"; agent: string; inputTokens: number; outputTokens: number; elapsedMs: number }
  /** The CLI said it is retrying its upstream model request (5xx, 529, a dropped stream). */
  | ({ type: "retry"; agent: string } & UpstreamRetry)
  | { type: "finished"; agent: string; result: AgentResult };

/** The final result of one child run. Failures are data, never thrown. */
export interface AgentResult {
  agent: string;
  model: string;
  role: AgentRole;
  ok: boolean;
  /** The child's final answer text (may be partial when !ok). */
  text: string;
  /** One clear line when !ok: agent name, exit code, last stderr line, or the reason. */
  error?: string;
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  usage: AgentUsage;
  /** True when output beyond the kept limit was dropped (text cap or over-long lines). */
  truncated?: boolean;
}

export interface RunOptions {
  role: AgentRole;
  /** Directory to run in; when absent a fresh empty temp directory is made and removed. */
  cwd?: string;
  /** `cwd` is a copy made for this turn alone (an isolated workspace): no later run returns. */
  scratch?: boolean;
  /**
   * `cwd` is a copy kept for later turns (a session's isolated workspace), which holds this
   * turn's changes until this settles: a child started ahead for a later turn waits in it only
   * from then on, so it sees none of them.
   */
  reusedAfter?: Promise<void>;
  /**
   * What the child may do there, mapped by each adapter to its CLI's own mode (read-only:
   * claude's plan mode, codex's read-only sandbox, gemini's default approval). Absent:
   * `workspace-write`, full-auto (CONTRACT.md §1.1.10).
   */
  access?: ChildAccess;
  /** Overrides the agent's configured model (background pinning, cheap judge). */
  model?: string;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** The turn this run belongs to: its log records carry it (`[turn <id>]`). */
  turnId?: string;
  /**
   * Provider credentials of the host request, forwarded only when `passApiKeys` is on
   * (e.g. { ANTHROPIC_API_KEY: "…" }).
   */
  hostCredentials?: Record<string, string>;
  /**
   * The turn's images and documents, which the prompt refers to by label ("image #1"). Each
   * child gets them in the way it can take them; one that cannot is told what it is missing.
   */
  attachments?: readonly LabelledAttachment[];
  /**
   * Told of a child still winding down when its run returns early: cut off or cancelled, the
   * run's result comes as soon as its process group has been told to end, and `ended` settles
   * once the group is over and the run's files are removed (it never rejects). Without this,
   * such a run returns only then.
   */
  onWindDown?: (ended: Promise<void>) => void;
}

/** A titled part of a prompt (a CLI child reads it under an `=== title ===` line). */
export interface PromptSection {
  title: string;
  body: string;
}

/** One entry of the conversation as a child sees it. */
export interface PromptEntry {
  role: "user" | "assistant";
  /**
   * What the entry is, e.g. "user", "assistant", "result of call t1": CLI children read it as a
   * `[tag]` line; structured messages leave it out where it only repeats the role.
   */
  tag: string;
  text: string;
}

/**
 * A prompt in parts, oldest and most stable first, so that a provider's prompt cache can reuse
 * what earlier turns of a session sent: the preamble stays the same for the whole session, the
 * conversation only grows at its end, and the request (this call's own sections, the task last)
 * comes after both. HTTP children get it as structured messages, CLI children as text.
 */
export interface StructuredPrompt {
  /** The session's standing instructions (the host's system prompt, the tools). */
  preamble: PromptSection[];
  /** The heading of the conversation for CLI children. */
  conversationTitle: string;
  conversation: PromptEntry[];
  /** This call's own sections after the conversation; the last one is the task. */
  request: PromptSection[];
  /** Names the session for providers that route by a cache key (no secret; a hash). */
  cacheKey?: string;
}

/** What a child is given: plain text, or a structured prompt (rendered as text for CLIs). */
export type AgentPrompt = string | StructuredPrompt;

/** Runs one agent on one prompt (prompt goes to the child's stdin). Never throws. */
export type RunAgent = (
  agent: AgentConfig,
  prompt: AgentPrompt,
  options: RunOptions,
) => Promise<AgentResult>;

/** What shapes a child before its prompt is known: its argv, cwd and environment. */
export type PrepareOptions =
  & Pick<RunOptions, "role" | "cwd" | "access" | "model" | "hostCredentials" | "attachments">
  & {
    /** Log records of the spawn carry it. */
    turnId?: string;
    /**
     * The prompt may come long after the spawn (a warm pool): a CLI that gives up on a silent
     * stdin gets its adapter's `stdinPrimer` at once.
     */
    holdStdin?: boolean;
  };

/** What belongs to the one run of a prepared child. */
export type PreparedRunOptions = Pick<RunOptions, "signal" | "onEvent" | "turnId" | "onWindDown">;

/**
 * A child started before its prompt: a CLI's process is already spawned (in its own process
 * group, with its argv, cwd and environment) and waits on stdin; an HTTP agent's call is made on
 * `run`. Exactly one of `run` and `discard` does anything; until then the child is owned by
 * whoever prepared it.
 */
export interface PreparedRun {
  readonly agent: string;
  /** The CLI child's pid (undefined for HTTP agents and for children that could not start). */
  readonly pid?: number;
  /** Delivers the prompt on stdin and runs the child to its end. Never throws. */
  run(prompt: AgentPrompt, options?: PreparedRunOptions): Promise<AgentResult>;
  /** Ends an unused child (its whole group) and removes its temp dir. Never throws. */
  discard(): Promise<void>;
  /** CLI children: false once the process has exited while it waited for its prompt. */
  alive?(): boolean;
}

/** Starts an agent's child without a prompt. Never throws: a child that cannot start fails on `run`. */
type PrepareAgent = (agent: AgentConfig, options: PrepareOptions) => Promise<PreparedRun>;

/** `RunAgent` (prepare, then run at once) with `prepare` alongside. */
export type AgentRunner = RunAgent & { prepare: PrepareAgent };

/** One retry of its model request that a CLI announced, as far as its output tells. */
export interface UpstreamRetry {
  /** The CLI's own attempt number, when it prints one. */
  attempt?: number;
  /** The most attempts the CLI will make, when it prints it. */
  maxAttempts?: number;
  /** What failed, in a few words: an HTTP status and/or the error text. */
  reason?: string;
}

/** What an adapter's `parseLine` extracts from one line of a CLI's stdout. */
export type ParsedLine =
  | { type: "text"; text: string }
  | { type: "activity"; text: string }
  /**
   * Absolute totals so far as the CLI reports them; costUsd when the CLI reports cost. Input
   * tokens include the cache reads and writes, which are also given on their own.
   */
  | {
    type: "usage";
    inputTokens?: number;
    outputTokens?: number;
    costUsd?: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
  }
  /** The CLI's own final result: its answer text, or an error it reported. */
  | { type: "final"; text?: string; error?: string }
  /** The CLI announced a retry of its upstream request. */
  | ({ type: "retry" } & UpstreamRetry)
  /** A line that is not in the CLI's format (kept only as a count and a sample). */
  | { type: "invalid"; line: string };

/** A turn's attachments as one CLI child receives them. */
export interface AttachmentDelivery {
  attachments: readonly LabelledAttachment[];
  /** Where the attachments its adapter takes as files were written, by label. */
  files: ReadonlyMap<string, string>;
  /** The child's own directory holding those files (never its working directory). */
  dir?: string;
}

interface ArgvOptions {
  role: AgentRole;
  model: string;
  /** Set when the turn has attachments. */
  delivery?: AttachmentDelivery;
  /** The user's own default provider for this CLI is this gateway (see `Adapter.userProvider`). */
  providerIsGateway?: boolean;
  /** Absent: `workspace-write`. */
  access?: ChildAccess;
}

/** What a parser may know about its run (to shorten paths in activity lines). */
export interface ParserContext {
  cwd?: string;
}

/** Facts about the gateway process and the run an adapter may need for the child's environment. */
interface EnvContext {
  /** What the child may do (absent: `workspace-write`), for a CLI that takes its mode by env. */
  access?: ChildAccess;
  /** The gateway runs as root (claude then needs IS_SANDBOX=1 to skip permissions). */
  isRoot: boolean;
  /** Where a Node-based CLI may keep its compiled code between runs (unset: leave it alone). */
  nodeCompileCache?: string;
}

/**
 * A CLI adapter: one entry of the runner table (agents/cli/runners.ts), everything the gateway
 * knows of one agent CLI: how to find and probe it, start it, feed it and read it, and what the
 * council may expect of it.
 */
export interface Adapter {
  /** The executable used when the agent entry names no `command` ("" = none: must be set). */
  defaultCommand: string;
  /** The model of an agent found on PATH (discovery, `init`); absent: never discovered. */
  defaultModel?: string;
  /** `doctor`'s version probe: the args that print its version (absent: not run, e.g. it could start work). */
  versionArgs?: readonly string[];
  /** Tokens its own system prompt and tool definitions take before our prompt (context budget). */
  overheadTokens: number;
  /**
   * The model family it serves: ids a host may pin its child to, the family's cheap model for
   * the default judge, and the model API that serves the family after the CLI (absent: it serves
   * no family of its own, e.g. any provider's models).
   */
  family?: { models: RegExp; cheapModel?: string; api?: HttpRunner };
  /** It waits for a prompt that comes late (primed if need be): a synthesizer may start ahead. */
  waitsForPrompt: boolean;
  /**
   * Its error result ends the run: the CLI may not exit after printing it (its group is then
   * ended at once, as after an answer, instead of waited for until the time-out).
   */
  endsOnError?: boolean;
  /** It uses tools of its own and narrates before them (its early text is not yet the answer). */
  usesTools: boolean;
  /**
   * How stdout is read: `jsonl` = one JSON event per line, a run must end with a `final`;
   * `text` = plain text, each chunk handed to the parser as it arrives, exit 0 is success.
   */
  stdout: "jsonl" | "text";
  argv(agent: AgentConfig, options: ArgvOptions): string[];
  /** Which attachments this CLI reads from files (absent: none; it gets them inline or not at all). */
  takesFile?(attachment: LabelledAttachment): boolean;
  /**
   * The stdin for a prompt whose turn has attachments (absent: the prompt and a note naming
   * the attachments the child cannot see).
   */
  stdin?(prompt: string, delivery: AttachmentDelivery): string;
  /**
   * The stdin for any prompt, for a CLI that takes a prompt in parts (claude's stream-json);
   * used instead of `stdin`. Undefined: the prompt goes as text after all.
   */
  structuredStdin?(
    agent: AgentConfig,
    prompt: AgentPrompt,
    delivery: AttachmentDelivery | undefined,
  ): string | undefined;
  /** Variables this CLI needs in the child's environment (before the agent's own `env`). */
  env?(context: EnvContext): Record<string, string>;
  /**
   * For a CLI whose history cannot be switched off: each run gets a throwaway home that links
   * the user's own files (login, settings) but not where the CLI records history.
   */
  stateHome?: StateHomeSpec;
  /**
   * Tells (by reading the CLI's own config) whether the user's default provider for it is this
   * gateway; `argv` then gets `providerIsGateway` and sends the child elsewhere.
   */
  userProvider?(env: Readonly<Record<string, string>>, selfOrigins: readonly string[]): Promise<
    boolean
  >;
  /**
   * Parses one stdout line (or text chunk). Stateful CLIs (deltas vs final text) get a fresh
   * parser per run, so this is a factory.
   */
  createParser(context?: ParserContext): (line: string) => ParsedLine[];
  /**
   * Written to stdin at spawn when the prompt may come late (`holdStdin`): for a CLI that quits
   * when its stdin stays silent for a while, but waits for the end of input once anything came.
   * It arrives as the start of the prompt.
   */
  stdinPrimer?: string;
  /**
   * Reads one stderr line, for CLIs that announce upstream retries there (only `retry` items
   * are used). Stateless.
   */
  parseStderr?(line: string): ParsedLine[];
}

/** Price table lookup input: USD per million tokens by longest model-id prefix. */
export type PriceTable = Record<string, Price>;
