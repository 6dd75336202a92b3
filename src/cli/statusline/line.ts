/**
 * The status line's text: a gateway's status document, seen from one Claude Code session, as one
 * short line (`council · claude ✓ 8s · codex … 11s · gemini ✗ · $0.04`, then any agent cooling
 * down: `· gemini cooling down 41s`), or why there is none.
 */
import { z } from "zod";
import type {
  AgentView,
  LiveTurnView,
  StatusReply,
  StatusView,
} from "../../daemon/gateway_client.ts";

/** What the line reads of Claude Code's stdin JSON (it sends much more). */
const StatusLineInputSchema = z.object({ session_id: z.string().min(1) }).partial();

/** The host's session id, or undefined when stdin is not the JSON Claude Code sends. */
export function sessionIdOf(stdin: string): string | undefined {
  try {
    const parsed = StatusLineInputSchema.safeParse(JSON.parse(stdin));
    return parsed.success ? parsed.data.session_id : undefined;
  } catch {
    return undefined;
  }
}

const MARKS: Record<string, string> = {
  running: "…",
  done: "✓",
  failed: "✗",
  "timed-out": "✗",
  cancelled: "⊘",
};

/** `8s`, `1m05s`, `1h02m`. */
export function shortDuration(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** `$0.04`; amounts under a cent as `<$0.01` (not `$0.00`, which reads as free). */
export function shortUsd(usd: number): string {
  if (usd <= 0) return "$0.00";
  return usd < 0.01 ? "<$0.01" : `$${usd.toFixed(2)}`;
}

type CallView = LiveTurnView["calls"][number];

function callPart(call: CallView): string | undefined {
  const name = call.role === "synth" ? "synth" : call.label;
  if (call.role === "judge" && call.state !== "running") return undefined;
  const mark = MARKS[call.state] ?? "?";
  const failed = call.state === "failed" || call.state === "timed-out";
  return failed ? `${name} ${mark}` : `${name} ${mark} ${shortDuration(call.elapsedMs)}`;
}

/** A live turn: its calls in start order (a compaction says so first), or that it is deciding. */
function turnParts(turn: LiveTurnView): string[] {
  const calls = turn.calls.map(callPart).filter((part): part is string => part !== undefined);
  if (!turn.decision) return [`deciding… ${shortDuration(turn.elapsedMs)}`, ...calls];
  // The plan's reason for a compaction starts with the word (plan.ts).
  const compaction = turn.decision.reason.startsWith("compaction") ? ["compaction"] : [];
  if (calls.length === 0) return [...compaction, `${turn.decision.kind} · starting`];
  return [...compaction, ...calls];
}

/**
 * The agents the council skips now, with the time left: `codex cooling down 41s`, or for several
 * `codex cooling down 41s, gemini 12s`; undefined when none is.
 */
export function coolingPart(agents: readonly AgentView[] = []): string | undefined {
  const cooling = agents.filter((agent) => agent.health?.state === "cooling-down");
  if (cooling.length === 0) return undefined;
  return cooling.map(({ agent, health }, i) => {
    const left = timeLeft(health?.coolingLeftMs ?? 0);
    return i === 0 ? `${agent} cooling down ${left}` : `${agent} ${left}`;
  }).join(", ");
}

/** Time left, rounded up to the second: `1s` while anything is left, never `0s`. */
export function timeLeft(ms: number): string {
  return shortDuration(Math.ceil(Math.max(0, ms) / 1000) * 1000);
}

/** The line for one status document, seen from the session it was asked for (if any). */
export function renderStatus(status: StatusView): string {
  const cooling = coolingPart(status.agents);
  const line = sessionLine(status);
  return cooling ? `${line} · ${cooling}` : line;
}

function sessionLine(status: StatusView): string {
  const session = status.session;
  if (session?.live) {
    return ["council", ...turnParts(session.live), shortUsd(session.usd)].join(" · ");
  }
  if (session) {
    const turns = `${session.turns} turn${session.turns === 1 ? "" : "s"}`;
    return ["council", "idle", turns, shortUsd(session.usd)].join(" · ");
  }
  const newest = status.live.at(-1);
  if (session === null) {
    // This session has run no turn yet; others may be running one.
    const others = status.live.length;
    return others ? `council · ready · ${others} running elsewhere` : "council · ready";
  }
  // No session asked for (stdin without one): the newest live turn is what the user waits for.
  if (newest) return ["council", ...turnParts(newest), shortUsd(newest.usd)].join(" · ");
  return "council · ready";
}

/** The line for any reply, including the gateway being down or refusing the token. */
export function renderStatusLine(reply: StatusReply, where: string): string {
  if (reply.ok) return renderStatus(reply.status);
  switch (reply.kind) {
    case "down":
      return `council · gateway down (${where})`;
    case "unauthorized":
      return "council · gateway refused the token (SVC_GATEWAY_TOKEN)";
    case "invalid":
      return `council · no status from ${where} (${reply.reason})`;
  }
}
