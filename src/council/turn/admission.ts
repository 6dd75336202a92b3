/**
 * Whether a turn may run: it waits while its session's running turns leave no room under the
 * spend cap, is refused at a cap, and has its start recorded, refused while a spend cap depends
 * on a journal that cannot record it.
 */
import type { TurnJournal, TurnStart } from "../journal.ts";
import { CANCELLED_NOTICE, capNotice, journalNotice } from "./notices.ts";
import { formatUsd } from "./progress.ts";
import type { Admission, SessionCap, SessionLimits, Sessions, Ticket } from "../session.ts";

interface AdmissionContext {
  sessions: Sessions;
  limits: SessionLimits;
  journal?: TurnJournal;
  start: TurnStart;
  signal: AbortSignal;
  /** A progress line (also logged). */
  progress: (line: string) => void;
  /** A problem the user must see: logged as an error and shown in progress. */
  alarm: (line: string) => void;
  /** The same, for a journal write that failed (shown once per turn). */
  journalAlarm: (line: string) => void;
}

/** Why a turn did not run, for the ledger and the answer. */
interface Refusal {
  kind: "refused";
  decision: { kind: "capped" | "refused" | "unplanned"; reason: string; agents: string[] };
  text: string;
}

type Admitted = { kind: "run"; ticket: Ticket } | Refusal;

function capLine(cap: SessionCap): string {
  return cap.kind === "turns"
    ? `session at its turn cap (${cap.turns}/${cap.maxTurns}) — no council run`
    : `session at its spend cap (${formatUsd(cap.usd)} of $${cap.maxSessionUsd}) — no council run`;
}

/** Resolves true when `settled` does, false when `signal` aborts first. */
function settledOrAborted(settled: Promise<void>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    settled.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
  });
}

/** Refused with a notice, the reason also shown in progress and kept in the ledger. */
function refuse(
  kind: Refusal["decision"]["kind"],
  reason: string,
  text: string,
): Refusal {
  return { kind: "refused", decision: { kind, reason, agents: [] }, text };
}

/**
 * Waits for room under the session's caps (with one progress line saying so), then counts the
 * turn, reserves its spend and records its start. Never throws.
 */
export async function admitTurn(context: AdmissionContext): Promise<Admitted> {
  const { sessions, limits, start, signal } = context;
  const spendCapped = limits.maxSessionUsd > 0;
  try {
    await sessions.load(start.sessionKey);
  } catch (err) {
    const problem = `cannot look up this session's turns and spend: ${(err as Error).message}`;
    context.alarm(`${problem}${spendCapped ? " — no council run (maxSessionUsd is set)" : ""}`);
    if (spendCapped) return refuse("refused", "session lookup failed", journalNotice(problem));
  }
  let waiting = false;
  for (;;) {
    let admission: Admission;
    try {
      admission = await sessions.admit(start.sessionKey, limits);
    } catch (err) {
      // A store shared by replicas is out of reach: no turn runs uncounted.
      const problem = `cannot count this turn: ${(err as Error).message}`;
      context.alarm(`${problem} — no council run`);
      return refuse("refused", "session store unreachable", journalNotice(problem));
    }
    if (admission.kind === "capped") {
      context.progress(capLine(admission.cap));
      return refuse("capped", `session at its ${admission.cap.kind} cap`, capNotice(admission.cap));
    }
    if (admission.kind === "run") return record(context, admission.ticket);
    if (!waiting) {
      const n = admission.running;
      context.progress(
        `waiting for ${n} running turn${n === 1 ? "" : "s"} of this session to finish: the ` +
          `spend cap (maxSessionUsd $${limits.maxSessionUsd}) has no room for another until then`,
      );
      waiting = true;
    }
    if (!(await settledOrAborted(admission.settled, signal))) {
      return refuse(
        "unplanned",
        "cancelled while waiting for the session's turns",
        CANCELLED_NOTICE,
      );
    }
  }
}

/** Records the start; while a spend cap depends on a journal that cannot, the turn may not run. */
function record(context: AdmissionContext, ticket: Ticket): Admitted {
  try {
    context.journal?.started(context.start);
    return { kind: "run", ticket };
  } catch (err) {
    const problem = (err as Error).message;
    if (context.limits.maxSessionUsd <= 0) {
      context.journalAlarm(`${problem} — this turn's spend is not recorded`);
      return { kind: "run", ticket };
    }
    context.journalAlarm(`${problem} — no council run: maxSessionUsd cannot hold without it`);
    context.sessions.withdraw(ticket);
    return refuse("refused", "the ledger cannot record the turn", journalNotice(problem));
  }
}
