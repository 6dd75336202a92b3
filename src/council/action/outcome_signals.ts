/**
 * Outcome signals read from host traffic: a call the council chose gets a tool_use id that names
 * its turn, and the host's next request says in that id's tool_result what became of it (ok,
 * error, or rejected by the user), so the result is tied to its turn without any state kept.
 */
import type { TranscriptEntry } from "../types.ts";

/** What became of a chosen call. No result (the session ended first) is `unknown`. */
export type CallResult = "ok" | "error" | "rejected";

/** A chosen call's result, as the host reported it. */
export interface ResolvedCall {
  /** The turn whose chosen call this was. */
  turn: string;
  toolUseId: string;
  result: CallResult;
}

const PREFIX = "toolu_cgw_";
const TURN_ID = /^[A-Za-z0-9-]{1,40}$/;
const CHOSEN_ID = /^toolu_cgw_([A-Za-z0-9-]{1,40})_[0-9a-f]{16}$/;

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/** The tool_use id of a call the council chose in `turnId` (undefined for an odd turn id). */
export function chosenCallId(turnId: string): string | undefined {
  return TURN_ID.test(turnId) ? `${PREFIX}${turnId}_${randomHex(8)}` : undefined;
}

/** The turn a chosen call's id names; undefined for every other id. */
export function turnOfCallId(toolUseId: string): string | undefined {
  return CHOSEN_ID.exec(toolUseId)?.[1];
}

/**
 * The user declined the call. Claude Code says so in the tool_result ("… doesn't want to proceed
 * with this tool use …", "Tool use rejected …"), usually with is_error set as well.
 */
const REJECTION = /doesn['’]t want to proceed with this tool use|tool use (?:was )?rejected/i;

/** What a tool_result says became of its call. */
export function resultOf(entry: { text: string; isError: boolean }): CallResult {
  if (REJECTION.test(entry.text)) return "rejected";
  return entry.isError ? "error" : "ok";
}

/**
 * The results the newest request brings for calls the council chose: the tool_results after the
 * transcript's last assistant step (older ones were read when they were new). Results for other
 * ids — the host's own calls, a lone child's — are not the council's choice and are ignored.
 */
export function resolvedCalls(transcript: readonly TranscriptEntry[]): ResolvedCall[] {
  const resolved: ResolvedCall[] = [];
  for (let i = transcript.length - 1; i >= 0; i--) {
    const entry = transcript[i];
    if (entry.kind === "assistant" || entry.kind === "tool_call") break;
    if (entry.kind !== "tool_result") continue;
    const turn = turnOfCallId(entry.id);
    if (turn) resolved.unshift({ turn, toolUseId: entry.id, result: resultOf(entry) });
  }
  return resolved;
}
