/**
 * Neutral types where the protocol layer meets the council: a turn request in, turn events out.
 *
 * Protocol code builds a `TurnRequest` and renders `TurnEvent`s; it knows nothing of agents.
 */

import type { Attachment } from "../base/attachment.ts";

export type { Attachment, LabelledAttachment } from "../base/attachment.ts";

/**
 * One entry of the conversation, protocol-free. Images and documents travel beside the text as
 * attachments (never as text), in the order the host sent them.
 */
export type TranscriptEntry =
  | { kind: "user"; text: string; attachments?: Attachment[] }
  | { kind: "assistant"; text: string }
  /** A mid-conversation system (or developer) message. */
  | { kind: "system"; text: string }
  | { kind: "tool_call"; id: string; name: string; input: unknown }
  | {
    kind: "tool_result";
    id: string;
    text: string;
    isError: boolean;
    attachments?: Attachment[];
  };

/** A tool the host declared. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input. */
  inputSchema: Record<string, unknown>;
}

/**
 * What the host says about a request beyond its prompt: its headers and body metadata,
 * translated by the protocol layer into host-neutral facts.
 */
export interface HostHints {
  /** The host's own conversation id (stays the same across a resumed conversation). */
  sessionId?: string;
  /** The host labelled the request: housekeeping (title, compaction, …) or a real turn. */
  requestClass?: { housekeeping: boolean; label: string; compaction?: boolean };
  /** Top-level fields of the JSON reply the host demands (structured output), if it does. */
  jsonReplyFields?: string[];
  /** Tools the host declared, counted even where the council does not use them (Responses). */
  declaredTools?: number;
}

/** What the protocol layer extracts from a request body (see `newTurnRequest`). */
export interface TurnInput {
  /** The model name the host asked for. */
  model: string;
  /** The system prompt text (Messages `system`, Responses `instructions` + developer messages). */
  system: string;
  transcript: TranscriptEntry[];
  /** Declared tools; empty for answer-only turns (always empty on the Responses protocol). */
  tools: ToolSpec[];
  /** A tool-loop continuation (last user message carries a tool result). */
  continuation: boolean;
  /** Provider credentials presented by the host, forwarded only when `passApiKeys` is on. */
  hostCredentials?: Record<string, string>;
  /** Headers and metadata of the host's request that say what kind of request it is. */
  hints?: HostHints;
}

/** A turn as the council runs it: the input plus what is derived from it. */
export interface TurnRequest extends TurnInput {
  /** Short id for log lines (`[turn <id>]`). */
  id: string;
  /** Recovered working directory (absolute, existing) or undefined → empty temp dir. */
  cwd?: string;
  /** Why the directory the host named is not used (a system directory, outside the roots). */
  cwdNote?: string;
  /** The user's actual ask with harness scaffolding stripped (drives fan-out). */
  ask: string;
  /**
   * SHA-256 hex of the host's session id when it sent one, else of the system prompt (volatile
   * lines normalised) + first user message.
   */
  sessionKey: string;
  /** Whether the request is housekeeping (title, summary, compaction, topic), and why. */
  traffic?: { housekeeping: boolean; reason: string; compaction?: boolean };
}

/** What the turn decided: one tool call for the host, or answer text. */
export type Outcome =
  | { kind: "answer"; text: string }
  | { kind: "tool"; name: string; input: Record<string, unknown> };

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those children's providers read from their prompt caches. */
  cacheReadTokens?: number;
  /** Of the input tokens, those written to children's providers' prompt caches. */
  cacheWriteTokens?: number;
  usd: number;
  /** Agent invocations made (children, judge, synthesizer). */
  calls: number;
  wallMs: number;
}

/**
 * Events of one turn, in order. `progress` lines belong on the progress channel; the first
 * `answer_delta` means the final answer has started (the protocol closes the progress block);
 * `done` comes last, exactly once.
 */
export type TurnEvent =
  /** One progress line, without trailing newline. */
  | { type: "progress"; text: string }
  /** Live text of the final answer (synthesizer or lone child). */
  | { type: "answer_delta"; text: string }
  /**
   * The outcome. For an answer, `outcome.text` is the whole answer: equal to the concatenated
   * deltas when any were sent, otherwise to be emitted whole.
   */
  | {
    type: "done";
    outcome: Outcome;
    usage: TurnUsage;
    /**
     * Set when no agent produced anything: `outcome.text` then explains which agents failed
     * and why. Both protocols render it as a normal answer (a failed response would only
     * make Codex retry the whole council).
     */
    failed?: boolean;
    /**
     * For a tool call a council chose: the tool_use id to give the host. It names the turn, so
     * the host's result for it can be tied back (outcome signals); otherwise the protocol mints one.
     */
    toolUseId?: string;
  };

/** Runs one council turn. Never throws: failures end as a `done` with an explanatory answer. */
export type RunTurn = (request: TurnRequest, signal: AbortSignal) => AsyncIterable<TurnEvent>;
