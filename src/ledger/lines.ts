/**
 * The ledger's line formats: what a turn's start, each finished call and the turn's end are
 * written as, and which of them a line read back is.
 */
import { z } from "zod";
import type { CallRecord, TurnRecord } from "../council/records.ts";
import type { TurnStart } from "../council/journal.ts";
import type { ResolvedCall } from "../council/action/outcome_signals.ts";

const LEDGER_VERSION = 1;

const count = z.number().int().nonnegative();
const usd = z.number().nonnegative();

/** One agent call of a turn. */
const LedgerCallSchema = z.object({
  agent: z.string(),
  /** `claude`, `claude#2`, `claude (synth)`, `judge`. */
  label: z.string(),
  role: z.string(),
  model: z.string(),
  status: z.enum(["ok", "failed", "timed-out", "aborted"]),
  durationMs: count,
  inputTokens: count,
  outputTokens: count,
  costUsd: usd,
  /** Cost or tokens were estimated, not reported by the CLI. */
  estimated: z.boolean(),
  /** Of the input tokens, those read from the provider's prompt cache (when reported). */
  cacheReadTokens: count.optional(),
  /** Of the input tokens, those written to the provider's prompt cache (when reported). */
  cacheWriteTokens: count.optional(),
  /** The council ended the call early: enough answers were in, or upstream retries. */
  cutOff: z.enum(["quorum", "retries"]).optional(),
  /** A child on an action turn: what it proposed (a valid call, an invalid one, nothing). */
  proposal: z.enum(["valid", "invalid", "none"]).optional(),
  /** Its proposal is the call the council chose. */
  agreed: z.boolean().optional(),
  /** It is the child credited with the chosen call (the first that proposed it). */
  chosen: z.boolean().optional(),
});
export type LedgerCall = z.infer<typeof LedgerCallSchema>;

/** The call an action turn of a council chose, and how many children proposed what. */
export const ChosenCallSchema = z.object({
  agent: z.string(),
  label: z.string(),
  /** The id the host got it under: its tool_result in the next request resolves it. */
  toolUseId: z.string().optional(),
  tool: z.string().optional(),
  /** Proposals that were this same call. */
  votes: count,
  proposals: count,
  valid: count,
});
export type ChosenCall = z.infer<typeof ChosenCallSchema>;

/** Under isolation: what became of the chosen candidate's file changes. */
export const WorkspaceOutcomeSchema = z.object({
  status: z.enum(["applied", "refused", "conflict", "none"]),
  agent: z.string().optional(),
});
export type WorkspaceOutcome = z.infer<typeof WorkspaceOutcomeSchema>;

/** A finished turn's line. Unknown keys are kept readable by older versions (not strict). */
const LedgerEntrySchema = z.object({
  v: z.literal(LEDGER_VERSION),
  /** When the turn ended (ISO 8601, UTC). */
  time: z.string(),
  turn: z.string(),
  /** The session key: a SHA-256 hash of the system prompt and first user message. */
  session: z.string().min(1),
  /** The session's turn count after this turn. */
  sessionTurn: count,
  /** The session's spend after this turn (as the running gateway had it). */
  sessionUsd: usd,
  /** Whether the turn counted toward the session's cap (false: capped, or no agents). */
  counted: z.boolean(),
  /** `single`, `fanout`, `capped`, `no-agents`, `refused`, `unplanned`, `interrupted`. */
  decision: z.string(),
  reason: z.string(),
  /** Children consulted. */
  agents: z.array(z.string()),
  /** How a fanned-out turn's answer came to be (picked: one candidate sent as written). */
  synthesis: z.object({
    kind: z.enum(["picked", "written", "selected", "unanimous", "single"]),
    /** The synthesizer's agent. */
    agent: z.string().optional(),
    /** The agent whose candidate or proposal was chosen. */
    picked: z.string().optional(),
    candidates: count.optional(),
  }).optional(),
  calls: z.array(LedgerCallSchema),
  outcome: z.enum(["answer", "tool"]),
  failed: z.boolean(),
  cancelled: z.boolean(),
  wallMs: count,
  inputTokens: count,
  outputTokens: count,
  cacheReadTokens: count.optional(),
  cacheWriteTokens: count.optional(),
  costUsd: usd,
  chosen: ChosenCallSchema.optional(),
  workspace: WorkspaceOutcomeSchema.optional(),
});
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** The fields every record of a kind other than the turn entry opens with. */
const recordHead = <K extends string>(kind: K) => ({
  v: z.literal(LEDGER_VERSION),
  kind: z.literal(kind),
  time: z.string(),
  turn: z.string(),
  session: z.string().min(1),
});

/** An admitted turn's first line, written before any agent runs. */
const LedgerStartSchema = z.object(recordHead("start"));
export type LedgerStart = z.infer<typeof LedgerStartSchema>;

/** A call of a running turn, written as it finishes: its spend survives a crash of the turn. */
const LedgerCallLineSchema = z.object({ ...recordHead("call"), call: LedgerCallSchema });
export type LedgerCallLine = z.infer<typeof LedgerCallLineSchema>;

/**
 * What became of a turn's chosen call, from the tool_result the host sent for it. A chosen call
 * without one (the session ended first) is `unknown`.
 */
export const LedgerOutcomeSchema = z.object({
  /** `turn`: the turn whose chosen call this resolves. */
  ...recordHead("outcome"),
  toolUseId: z.string(),
  result: z.enum(["ok", "error", "rejected"]),
});
export type LedgerOutcome = z.infer<typeof LedgerOutcomeSchema>;

/** What a line of the ledger is. */
export type LedgerLine =
  | { kind: "turn"; entry: LedgerEntry }
  | { kind: "start"; start: LedgerStart }
  | { kind: "call"; line: LedgerCallLine }
  | { kind: "outcome"; outcome: LedgerOutcome }
  | { kind: "blank" }
  | { kind: "invalid"; reason: string };

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue.path.join(".") || "(line)"}: ${issue.message}`;
}

/** Reads one line (pure). */
export function parseLine(line: string): LedgerLine {
  if (!line.trim()) return { kind: "blank" };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: "invalid", reason: "not JSON" };
  }
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (kind === "start") return parseAs(LedgerStartSchema, value, (start) => ({ kind, start }));
  if (kind === "call") return parseAs(LedgerCallLineSchema, value, (line) => ({ kind, line }));
  if (kind === "outcome") {
    return parseAs(LedgerOutcomeSchema, value, (outcome) => ({ kind, outcome }));
  }
  return parseAs(LedgerEntrySchema, value, (entry) => ({ kind: "turn", entry }));
}

function parseAs<T>(
  schema: z.ZodType<T>,
  value: unknown,
  wrap: (data: T) => LedgerLine,
): LedgerLine {
  const parsed = schema.safeParse(value);
  return parsed.success ? wrap(parsed.data) : { kind: "invalid", reason: issueText(parsed.error) };
}

function callStatus(call: CallRecord): LedgerCall["status"] {
  if (call.ok) return "ok";
  if (call.timedOut) return "timed-out";
  return call.aborted ? "aborted" : "failed";
}

/** A call as the ledger keeps it. */
function ledgerCall(call: CallRecord): LedgerCall {
  return {
    agent: call.agent,
    label: call.label,
    role: call.role,
    model: call.model,
    status: callStatus(call),
    durationMs: Math.max(0, Math.round(call.durationMs)),
    inputTokens: call.usage.inputTokens,
    outputTokens: call.usage.outputTokens,
    costUsd: call.usage.costUsd,
    estimated: call.usage.estimated,
    ...(call.usage.cacheReadTokens !== undefined
      ? { cacheReadTokens: call.usage.cacheReadTokens }
      : {}),
    ...(call.usage.cacheWriteTokens !== undefined
      ? { cacheWriteTokens: call.usage.cacheWriteTokens }
      : {}),
    ...(call.cutOff ? { cutOff: call.cutOff } : {}),
    ...(call.proposal ? { proposal: call.proposal } : {}),
    ...(call.agreed !== undefined ? { agreed: call.agreed } : {}),
    ...(call.chosen !== undefined ? { chosen: call.chosen } : {}),
  };
}

/** The ledger line of a finished turn. */
export function ledgerEntry(record: TurnRecord): LedgerEntry {
  return {
    v: LEDGER_VERSION,
    time: new Date(record.endedAt).toISOString(),
    turn: record.turnId,
    session: record.sessionKey,
    sessionTurn: record.sessionTurns,
    sessionUsd: record.sessionUsd,
    counted: record.counted,
    decision: record.decision.kind,
    reason: record.decision.reason,
    agents: record.decision.agents,
    ...(record.decision.synthesis ? { synthesis: record.decision.synthesis } : {}),
    calls: record.calls.map(ledgerCall),
    outcome: record.outcomeKind,
    failed: record.failed,
    cancelled: record.cancelled,
    wallMs: Math.max(0, Math.round(record.usage.wallMs)),
    inputTokens: record.usage.inputTokens,
    outputTokens: record.usage.outputTokens,
    ...(record.usage.cacheReadTokens ? { cacheReadTokens: record.usage.cacheReadTokens } : {}),
    ...(record.usage.cacheWriteTokens ? { cacheWriteTokens: record.usage.cacheWriteTokens } : {}),
    costUsd: record.usage.usd,
    ...(record.chosen ? { chosen: record.chosen } : {}),
    ...(record.workspace ? { workspace: record.workspace } : {}),
  };
}

/** The ledger line of an admitted turn's start. */
export function ledgerStart(start: TurnStart): LedgerStart {
  return {
    v: LEDGER_VERSION,
    kind: "start",
    time: new Date(start.startedAt).toISOString(),
    turn: start.turnId,
    session: start.sessionKey,
  };
}

/** The ledger line of a running turn's finished call. */
export function ledgerCallLine(
  start: TurnStart,
  call: CallRecord,
  endedAt: number,
): LedgerCallLine {
  return {
    v: LEDGER_VERSION,
    kind: "call",
    time: new Date(endedAt).toISOString(),
    turn: start.turnId,
    session: start.sessionKey,
    call: ledgerCall(call),
  };
}

/** The ledger line of a chosen call's result, read from the host's request in `session`. */
export function ledgerOutcome(resolved: ResolvedCall, session: string, at: number): LedgerOutcome {
  return {
    v: LEDGER_VERSION,
    kind: "outcome",
    time: new Date(at).toISOString(),
    turn: resolved.turn,
    session,
    toolUseId: resolved.toolUseId,
    result: resolved.result,
  };
}
