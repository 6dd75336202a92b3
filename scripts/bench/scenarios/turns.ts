/** What the scenarios share about a bench turn: did it answer as the fakes would. */
import type { StreamedTurn } from "../client.ts";

/** Why a turn through the bench fakes failed, or undefined when it produced their answer. */
export function failureOf(turn: StreamedTurn, expected = "BENCH-ANSWER"): string | undefined {
  if (turn.error) return turn.error;
  if (!turn.answer.includes(expected)) {
    return `unexpected answer: ${JSON.stringify(turn.answer.slice(0, 120))}`;
  }
  return undefined;
}
