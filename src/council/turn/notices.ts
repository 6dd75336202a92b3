/**
 * Canned answers the council gives instead of (or after) running agents: session caps,
 * total failure, cancellation, no agents.
 */
import type { AgentResult } from "../../agents/types.ts";
import { discoverableNames } from "../../agents/cli/runners.ts";
import { errorOf, formatUsd } from "./progress.ts";
import { oneLine } from "../../base/text.ts";
import type { SessionCap } from "../session.ts";

export function capNotice(cap: SessionCap): string {
  if (cap.kind === "turns") {
    return [
      `This conversation has reached the council gateway's turn limit ` +
      `(${cap.turns} of maxTurns ${cap.maxTurns}), so no council was run for this request.`,
      "",
      "To continue, start a new conversation, or raise `maxTurns` in the gateway's config " +
      "file (council.yaml) and restart the gateway.",
    ].join("\n");
  }
  return [
    `This conversation has spent ${formatUsd(cap.usd)}, which reaches the council gateway's ` +
    `spend limit (maxSessionUsd ${formatUsd(cap.maxSessionUsd)}), so no council was run for ` +
    "this request.",
    "",
    "To continue, start a new conversation, or raise `maxSessionUsd` in the gateway's config " +
    "file (council.yaml; 0 means no limit) and restart the gateway.",
  ].join("\n");
}

/** The spend cap cannot be enforced because the ledger cannot record or read spend. */
export function journalNotice(problem: string): string {
  return [
    "The council gateway cannot keep its spend record, so no council was run for this request: " +
    "the spend limit (maxSessionUsd) cannot hold without it.",
    "",
    `Problem: ${oneLine(problem)}`,
    "",
    "Fix the ledger file (disk space, permissions, the `ledger` path in council.yaml) and try " +
    "again; the gateway log has the details.",
  ].join("\n");
}

/** One line per agent that failed or whose reply was unusable. */
export interface Failure {
  label: string;
  reason: string;
}

export function allFailedNotice(failures: readonly Failure[]): string {
  const lines = failures.map((f) => `- ${f.label}: ${oneLine(f.reason)}`);
  return [
    "The council could not produce an answer: no agent returned a usable reply.",
    "",
    ...lines,
    "",
    "Check that these agent CLIs are installed and signed in (`council-gateway doctor`), " +
    "then try again.",
  ].join("\n");
}

export const CANCELLED_NOTICE = "The request was cancelled before the council finished.";

export const NO_AGENTS_NOTICE = "The council gateway has no agents configured and found no " +
  `${discoverableNames()} CLI on PATH. Add \`defaultAgents\` to its config file (council.yaml) ` +
  "or install one of these CLIs, then restart the gateway.";

/** Why a call gave nothing usable, in one line. */
export function failureReason(result: AgentResult): string {
  const error = errorOf(result);
  if (error) return error;
  if (result.timedOut) return "timed out";
  if (result.ok) return "returned an empty reply";
  return `exited with code ${result.exitCode ?? "unknown"}`;
}
