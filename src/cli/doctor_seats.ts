/** `doctor`'s word on the council's worth: one sentence per member from the ledger's last week. */
import type { Config } from "../config/mod.ts";
import { readSeatRecords } from "../ledger/records_file.ts";
import { seats, seatSentence } from "../ledger/seats.ts";

/** The members' sentences over the last 7 days; empty without a ledger or turns in it. */
export function seatsSummary(
  config: Pick<Config, "ledger" | "defaultAgents">,
  now: number,
): string {
  if (!config.ledger) return "";
  let rows;
  try {
    const names = config.defaultAgents.map((a) => a.name);
    rows = seats(readSeatRecords(config.ledger), "7d", now, names);
  } catch {
    return ""; // an unreadable ledger is `usage`'s to report, not a problem of the setup
  }
  if (rows.every((row) => row.turns === 0)) return "";
  return `\nseats over the last 7 days (council-gateway usage --agents):\n` +
    rows.map((row) => `  ${seatSentence(row)}\n`).join("");
}
