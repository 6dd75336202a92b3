/**
 * The end of a turn: its spend settled with the session, the closing recap, the record handed to
 * the journal and `onTurnEnd`, and the single `done` event.
 */
import type { CallRecord, TurnRecord, TurnSignals } from "../records.ts";
import type { TurnContext } from "./context.ts";
import type { Outcome } from "../types.ts";

export function finishTurn(turn: TurnContext, outcome: Outcome): void {
  if (turn.done) return;
  const { sessions, clock } = turn.env;
  const key = turn.request.sessionKey;
  const wallMs = clock.now() - turn.startedAt;
  const usage = turn.meter.usage(wallMs);
  if (turn.meter.calls > 0) {
    const recap = turn.recap();
    turn.log.info("{recap}", {
      recap,
      ...usage,
      usd: roundUsd(usage.usd),
      estimated: turn.meter.estimated,
    });
    if (!turn.answerStarted) turn.emit({ type: "progress", text: recap });
  }
  const session = turn.ticket ? sessions.settle(turn.ticket, usage.usd) : sessions.peek(key);
  const sessionUsd = session?.usd ?? 0;
  const sessionTurns = session?.turns ?? 0;
  turn.log.info("session turns={turns} sessionUsd={sessionUsd}", {
    turns: sessionTurns,
    sessionUsd: roundUsd(sessionUsd),
    session: key.slice(0, 12),
  });
  const record: TurnRecord = {
    turnId: turn.request.id,
    sessionKey: key,
    usage,
    sessionTurns,
    sessionUsd,
    outcomeKind: outcome.kind,
    endedAt: clock.now(),
    counted: turn.counted,
    decision: turn.decision,
    calls: withSignals(turn.calls, turn.signals),
    failed: turn.failed,
    cancelled: turn.signal.aborted,
    ...(turn.signals.chosen ? { chosen: turn.signals.chosen } : {}),
    ...(turn.signals.workspace ? { workspace: turn.signals.workspace } : {}),
  };
  // Before `done` is set, so a failure can still reach progress.
  turn.journal((journal) => journal.ended(record));
  turn.finished();
  // A cancelled turn still hands its host an answer (the text so far, or a notice), but its
  // log must not read like one that finished.
  turn.log.info("turn done: {kind}", {
    kind: turn.signal.aborted
      ? "cancelled"
      : outcome.kind === "tool"
      ? `tool ${outcome.name}`
      : "answer",
  });
  try {
    turn.env.onTurnEnd?.(record);
  } catch (err) {
    turn.log.warn("onTurnEnd failed: {error}", { error: String(err) });
  }
  const toolUseId = outcome.kind === "tool" ? turn.signals.chosen?.toolUseId : undefined;
  turn.emit({
    type: "done",
    outcome,
    usage,
    ...(turn.failed ? { failed: true } : {}),
    ...(toolUseId ? { toolUseId } : {}),
  });
}

/** The children's calls with their part in the turn's choice (by label). */
function withSignals(calls: readonly CallRecord[], signals: TurnSignals): CallRecord[] {
  const parts = signals.calls;
  if (!parts) return [...calls];
  return calls.map((call) =>
    call.role === "child" && parts.has(call.label) ? { ...call, ...parts.get(call.label) } : call
  );
}

/** Dollars to a millionth of a cent at most, so log lines do not show float noise. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
