/**
 * Test helpers for the council engine: a config builder, a request builder, an in-process
 * scripted fake `RunAgent`, and a collector for a turn's events.
 */
import type { AgentConfig, Config, ConfigFile } from "../../src/config/mod.ts";
import { FakeClock } from "./fake_clock.ts";
import { createCouncil, type TurnRecord } from "../../src/council/turn/turn.ts";
import { configOf } from "./test_config.ts";
import { promptText } from "../../src/agents/prompt_text.ts";
import type {
  AgentEvent,
  AgentPrompt,
  AgentResult,
  AgentRole,
  AgentUsage,
  RunAgent,
  RunOptions,
  UpstreamRetry,
} from "../../src/agents/types.ts";
import type {
  Outcome,
  ToolSpec,
  TranscriptEntry,
  TurnEvent,
  TurnRequest,
  TurnUsage,
} from "../../src/council/types.ts";

export const THREE_AGENTS = [
  { runner: "claude", model: "opus" },
  { runner: "codex", model: "gpt-5.5" },
  { runner: "gemini", model: "gemini-2.5-pro" },
] as const;

/** A frozen-shape Config from a config-file object (three agents unless given). */
export function testConfig(file: ConfigFile = {}): Config {
  return configOf({
    defaultAgents: THREE_AGENTS.map((a) => ({ ...a })),
    fanOutPolicy: "always",
    ...file,
  });
}

/** A Config whose council is `agents` as they are (fake CLIs, HTTP stubs). */
export function withAgents(agents: AgentConfig[], file: ConfigFile = {}): Config {
  return configOf({ fanOutPolicy: "always", ...file }, agents);
}

let nextId = 0;

/** A TurnRequest with sensible defaults; `ask` becomes the last user message. */
export function testRequest(options: {
  ask?: string;
  model?: string;
  system?: string;
  tools?: ToolSpec[];
  transcript?: TranscriptEntry[];
  continuation?: boolean;
  sessionKey?: string;
  cwd?: string;
  hostCredentials?: Record<string, string>;
} = {}): TurnRequest {
  const ask = options.ask ?? "Refactor the parser module to remove duplication";
  return {
    id: `t${++nextId}`,
    model: options.model ?? "claude-opus-4-8",
    system: options.system ?? "You are a coding assistant.",
    transcript: options.transcript ?? [{ kind: "user", text: ask }],
    tools: options.tools ?? [],
    continuation: options.continuation ?? false,
    cwd: options.cwd,
    ask,
    sessionKey: options.sessionKey ?? `session-${nextId}`,
    hostCredentials: options.hostCredentials,
  };
}

export const READ_TOOL: ToolSpec = {
  name: "Read",
  description: "Reads a file from the local filesystem.",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { file_path: { type: "string" }, limit: { type: "number" } },
    required: ["file_path"],
    additionalProperties: false,
  },
};

export const BASH_TOOL: ToolSpec = {
  name: "Bash",
  description: "Runs a shell command.",
  inputSchema: {
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
  },
};

/** What a scripted fake agent does for one call. */
export interface FakeReply {
  text?: string;
  /** Text deltas to stream; default: the whole text as one delta. */
  deltas?: string[];
  ok?: boolean;
  error?: string;
  exitCode?: number | null;
  timedOut?: boolean;
  usage?: Partial<AgentUsage>;
  durationMs?: number;
  activities?: string[];
  /** Deltas streamed before waiting on the gate (to test live streaming). */
  early?: string[];
  /** Usage counters reported before waiting on the gate (to test telemetry). */
  earlyUsage?: { inputTokens: number; outputTokens: number };
  /** Wait for this before finishing (or for abort). */
  gate?: Promise<unknown>;
  /** Never finish on its own; only abort ends the call. */
  hang?: boolean;
  /** Make runAgent throw (contract violation the council must survive). */
  throws?: boolean;
  /** Upstream retries announced before waiting on the gate (a CLI stuck retrying). */
  retries?: UpstreamRetry[];
  /** Usage reported when the call is aborted (what a cut-off child had spent). */
  abortUsage?: Partial<AgentUsage>;
  /** When aborted: the child's end, handed to `onWindDown` (a group still ending). */
  windDown?: Promise<void>;
}

export interface FakeCall {
  agent: AgentConfig;
  /** The prompt as the text a CLI child would read. */
  prompt: string;
  /** The prompt as the agent was given it (structured for council prompts). */
  given: AgentPrompt;
  options: RunOptions;
  model: string;
  role: AgentRole;
}

export type FakeScript = (call: FakeCall) => FakeReply | Promise<FakeReply>;

/** Scripts by `agent:role` (e.g. "claude:synth"), falling back to `agent` then `*:role`. */
export function byAgent(
  table: Record<string, FakeReply | ((call: FakeCall) => FakeReply | Promise<FakeReply>)>,
) {
  return (call: FakeCall): FakeReply | Promise<FakeReply> => {
    const entry = table[`${call.agent.name}:${call.role}`] ?? table[call.agent.name] ??
      table[`*:${call.role}`] ?? table["*"];
    if (entry === undefined) throw new Error(`no script for ${call.agent.name}:${call.role}`);
    return typeof entry === "function" ? entry(call) : entry;
  };
}

export interface FakeAgents {
  runAgent: RunAgent;
  calls: FakeCall[];
  /** Calls still running. */
  readonly active: number;
}

function abortPromise(signal: AbortSignal | undefined): {
  promise: Promise<void>;
  dispose: () => void;
} {
  if (!signal) return { promise: new Promise(() => {}), dispose: () => {} };
  let onAbort = () => {};
  const promise = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

export function fakeAgents(script: FakeScript): FakeAgents {
  const calls: FakeCall[] = [];
  let active = 0;
  const runAgent: RunAgent = async (agent, prompt, options) => {
    const model = options.model ?? agent.model;
    const call: FakeCall = {
      agent,
      prompt: promptText(prompt),
      given: prompt,
      options,
      model,
      role: options.role,
    };
    calls.push(call);
    active++;
    try {
      const emit = (event: AgentEvent) => options.onEvent?.(event);
      emit({ type: "started", agent: agent.name, model });
      const reply = await script(call);
      if (reply.throws) throw new Error("runner exploded");
      for (const text of reply.early ?? []) emit({ type: "text", agent: agent.name, text });
      if (reply.earlyUsage) {
        emit({ type: "usage", agent: agent.name, ...reply.earlyUsage, elapsedMs: 0 });
      }
      for (const retry of reply.retries ?? []) {
        if (!options.signal?.aborted) emit({ type: "retry", agent: agent.name, ...retry });
      }
      if (reply.gate || reply.hang) {
        const aborted = abortPromise(options.signal);
        await Promise.race([reply.gate ?? new Promise(() => {}), aborted.promise]);
        aborted.dispose();
      }
      const base = {
        agent: agent.name,
        model,
        role: options.role,
        durationMs: reply.durationMs ?? 1000,
        timedOut: reply.timedOut ?? false,
      };
      if (options.signal?.aborted) {
        if (reply.windDown) options.onWindDown?.(reply.windDown);
        const result: AgentResult = {
          ...base,
          ok: false,
          text: "",
          error: `${agent.name}: aborted`,
          exitCode: null,
          aborted: true,
          usage: {
            inputTokens: 0,
            outputTokens: 0,
            costUsd: 0,
            estimated: true,
            ...reply.abortUsage,
          },
        };
        emit({ type: "finished", agent: agent.name, result });
        return result;
      }
      for (const text of reply.activities ?? []) {
        emit({ type: "activity", agent: agent.name, text });
      }
      const text = reply.text ?? "";
      for (const delta of reply.deltas ?? (text ? [text] : [])) {
        emit({ type: "text", agent: agent.name, text: delta });
      }
      const usage: AgentUsage = {
        inputTokens: 100,
        outputTokens: 50,
        costUsd: 0.01,
        estimated: false,
        ...reply.usage,
      };
      emit({
        type: "usage",
        agent: agent.name,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        elapsedMs: base.durationMs,
      });
      const ok = reply.ok ?? true;
      const result: AgentResult = {
        ...base,
        ok,
        text,
        error: ok ? undefined : (reply.error ?? `${agent.name}: exit 1`),
        exitCode: ok ? 0 : (reply.exitCode ?? 1),
        aborted: false,
        usage,
      };
      emit({ type: "finished", agent: agent.name, result });
      return result;
    } finally {
      active--;
    }
  };
  return {
    runAgent,
    calls,
    get active() {
      return active;
    },
  };
}

/** All events of a turn, and convenient views of them. */
export interface TurnLog {
  events: TurnEvent[];
  progress: string[];
  deltas: string[];
  outcome: Outcome;
  usage: TurnUsage;
  /** The done event's `failed` flag. */
  failed: boolean;
}

export function summarize(events: TurnEvent[]): TurnLog {
  const done = events.filter((e) => e.type === "done");
  if (done.length !== 1) throw new Error(`expected exactly one done, got ${done.length}`);
  if (events.at(-1)?.type !== "done") throw new Error("done is not the last event");
  const last = done[0] as Extract<TurnEvent, { type: "done" }>;
  return {
    events,
    progress: events.flatMap((e) => (e.type === "progress" ? [e.text] : [])),
    deltas: events.flatMap((e) => (e.type === "answer_delta" ? [e.text] : [])),
    outcome: last.outcome,
    usage: last.usage,
    failed: last.failed === true,
  };
}

export async function collect(events: AsyncIterable<TurnEvent>): Promise<TurnLog> {
  const all: TurnEvent[] = [];
  for await (const event of events) all.push(event);
  return summarize(all);
}

/** Consumes a turn in the background; `until` waits for a matching event. */
export class TurnWatcher {
  events: TurnEvent[] = [];
  finished: Promise<TurnLog>;
  #waiters: { test: (e: TurnEvent) => boolean; resolve: () => void }[] = [];

  constructor(stream: AsyncIterable<TurnEvent>) {
    this.finished = (async () => {
      for await (const event of stream) {
        this.events.push(event);
        this.#waiters = this.#waiters.filter((w) => {
          if (!w.test(event)) return true;
          w.resolve();
          return false;
        });
      }
      return summarize(this.events);
    })();
  }

  until(test: (e: TurnEvent) => boolean): Promise<void> {
    if (this.events.some(test)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }

  progressMatching(re: RegExp): Promise<void> {
    return this.until((e) => e.type === "progress" && re.test(e.text));
  }

  get progress(): string[] {
    return this.events.flatMap((e) => (e.type === "progress" ? [e.text] : []));
  }
}

/** A promise with its resolver, for gating fake agents. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A council over scripted fake agents on a fake clock, with heartbeat and telemetry out of the
 * way, keeping every finished turn's record.
 */
export function recordingCouncil(file: ConfigFile, script: FakeScript) {
  const fake = fakeAgents(script);
  const clock = new FakeClock();
  const records: TurnRecord[] = [];
  const council = createCouncil({
    config: testConfig({ heartbeatMs: 1e9, telemetryMs: 1e9, ...file }),
    runAgent: fake.runAgent,
    clock,
    random: () => 0,
    onTurnEnd: (record) => records.push(record),
  });
  return { ...council, fake, clock, records };
}
