/**
 * Neutral types of the agents layer: what running one child produces.
 *
 * The council imports these; nothing here knows about councils, HTTP or protocols.
 */
import type { AgentConfig, Price } from "../config.ts";

/** What a child is asked to do; adapters may shape argv by it (e.g. no tools for a judge). */
export type AgentRole = "child" | "synth" | "judge";

/** Token counts and cost of one child run. */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** True when cost (or tokens) were estimated rather than reported by the CLI. */
  estimated: boolean;
}

/** One thing a child did or said while running. */
export type AgentEvent =
  | { type: "started"; agent: string; model: string; pid?: number }
  /** A piece of the child's answer text, as it streams. */
  | { type: "text"; agent: string; text: string }
  /** A human-readable action such as "Read notes.txt" or "$ ls -la". */
  | { type: "activity"; agent: string; text: string }
  /** Running counters (absolute, not increments) for telemetry. */
  | { type: "usage"; agent: string; inputTokens: number; outputTokens: number; elapsedMs: number }
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
}

export interface RunOptions {
  role: AgentRole;
  /** Directory to run in; when absent a fresh empty temp directory is made and removed. */
  cwd?: string;
  /** Overrides the agent's configured model (background pinning, cheap judge). */
  model?: string;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /**
   * Provider credentials of the host request, forwarded only when `passApiKeys` is on
   * (e.g. { ANTHROPIC_API_KEY: "…" }).
   */
  hostCredentials?: Record<string, string>;
}

/** Runs one agent on one prompt (prompt goes to the child's stdin). Never throws. */
export type RunAgent = (
  agent: AgentConfig,
  prompt: string,
  options: RunOptions,
) => Promise<AgentResult>;

/** What an adapter's `parseLine` extracts from one line of a CLI's stdout. */
export type ParsedLine =
  | { type: "text"; text: string }
  | { type: "activity"; text: string }
  /** Absolute totals so far as the CLI reports them; costUsd when the CLI reports cost. */
  | { type: "usage"; inputTokens?: number; outputTokens?: number; costUsd?: number }
  /** The CLI's own final result: its answer text, or an error it reported. */
  | { type: "final"; text?: string; error?: string };

export interface ArgvOptions {
  role: AgentRole;
  model: string;
}

/** A CLI adapter: a pair of pure functions. */
export interface Adapter {
  /** The executable used when the agent entry names no `command`. */
  defaultCommand: string;
  argv(agent: AgentConfig, options: ArgvOptions): string[];
  /**
   * Parses one stdout line. Stateful CLIs (deltas vs final text) get a fresh parser per run,
   * so this is a factory.
   */
  createParser(): (line: string) => ParsedLine[];
}

/** Price table lookup input: USD per million tokens by longest model-id prefix. */
export type PriceTable = Record<string, Price>;
