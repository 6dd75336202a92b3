/** Every record of a ledger file, parsed, for the folds over records (seats). */
import { readLinesSync } from "./file.ts";
import { type LedgerLine, parseLine } from "./lines.ts";

/** The turn entries and outcome records of the file (none when it does not exist). */
export function readSeatRecords(path: string): LedgerLine[] {
  const records: LedgerLine[] = [];
  readLinesSync(path, (text) => {
    if (text === undefined) return;
    const line = parseLine(text);
    if (line.kind === "turn" || line.kind === "outcome") records.push(line);
  });
  return records;
}
