/** Seats as text: a table of each member's figures, then one plain sentence per member. */
import { type SeatRow, seatSentence, type SeatWindow } from "../ledger/seats.ts";
import { table } from "./doctor.ts";

const WINDOW_NAMES: Record<SeatWindow, string> = {
  today: "today (UTC)",
  "7d": "the last 7 days",
  all: "all time",
};

const percent = (part: number, whole: number) =>
  whole > 0 ? `${Math.round((part / whole) * 100)} %` : "—";

/** The seats of `window` as a table and sentences. */
export function renderSeats(rows: readonly SeatRow[], window: SeatWindow): string {
  if (rows.length === 0) return `Seats (${WINDOW_NAMES[window]}): no agents.\n`;
  const grid = table([
    [
      "agent",
      "turns",
      "proposals",
      "valid",
      "chosen",
      "ok",
      "error",
      "rejected",
      "agreed",
      "failed",
      "cost",
      "median",
    ],
    ...rows.map((r) => [
      r.agent,
      String(r.turns),
      String(r.proposals),
      `${r.valid} (${percent(r.valid, r.proposals)})`,
      String(r.chosen),
      String(r.chosenOk),
      String(r.chosenError),
      String(r.chosenRejected),
      `${r.agreed} (${percent(r.agreed, r.valid)})`,
      String(r.failed),
      `$${r.usd.toFixed(2)}`,
      `${(r.medianMs / 1000).toFixed(1)} s`,
    ]),
  ]);
  return `Seats (${WINDOW_NAMES[window]})\n${grid}\n${rows.map(seatSentence).join("\n")}\n`;
}
