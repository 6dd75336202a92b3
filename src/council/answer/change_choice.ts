/**
 * The synthesizer's choice among candidates' file changes, given on the first line of its reply
 * (`CHANGES: B` or `CHANGES: none`) and held back from the answer stream.
 */
import type { TextFilter } from "../calls/calls.ts";
import { candidateLabel } from "../prompt/prompts.ts";

export type ChangeChoice =
  /** The candidate at this position (as shown to the synthesizer) has its changes applied. */
  | { kind: "candidate"; index: number }
  | { kind: "none" }
  /** The reply did not start with a usable choice line. */
  | { kind: "unstated" };

const CHOICE_LINE = /^[\W_]*changes\s*:\s*(?:candidate\s+)?([a-z]{1,2}|none)[\W_]*$/i;
/** A first line longer than this is the answer itself, not a choice. */
const MAX_CHOICE_LINE = 80;

/** The choice a line states among `count` candidates, or undefined when it states none. */
export function parseChoiceLine(line: string, count: number): ChangeChoice | undefined {
  const match = CHOICE_LINE.exec(line.trim());
  if (!match) return undefined;
  const word = match[1].toUpperCase();
  if (word === "NONE") return { kind: "none" };
  const index = Array.from({ length: count }, (_, i) => candidateLabel(i)).indexOf(word);
  return index >= 0 ? { kind: "candidate", index } : undefined;
}

/**
 * Reads a synthesizer's streamed text. Each run of text (from the start, or after a tool use:
 * the reply proper follows the last one) may open with the choice line, which is taken out,
 * with the blank lines after it, and reported through `onChoice` before any text of that run
 * goes on. The last choice stated wins.
 */
export class ChoiceLineReader implements TextFilter {
  #count: number;
  #onChoice: (choice: ChangeChoice) => void;
  #state: "head" | "blank" | "pass" = "head";
  #head = "";
  #choice: ChangeChoice = { kind: "unstated" };

  constructor(count: number, onChoice: (choice: ChangeChoice) => void) {
    this.#count = count;
    this.#onChoice = onChoice;
  }

  /** The choice stated (`unstated` until one is, and when none was). */
  get choice(): ChangeChoice {
    return this.#choice;
  }

  feed(text: string): string {
    if (this.#state === "pass") return text;
    if (this.#state === "blank") return this.#skipBlank(text);
    this.#head += text;
    const body = this.#head.trimStart();
    const end = body.indexOf("\n");
    if (end < 0) return body.length > MAX_CHOICE_LINE ? this.#pass() : "";
    const choice = parseChoiceLine(body.slice(0, end), this.#count);
    return choice ? this.#chosen(choice, body.slice(end + 1)) : this.#pass();
  }

  flush(): string {
    const head = this.#head;
    const choice = this.#state === "head" ? parseChoiceLine(head, this.#count) : undefined;
    if (choice) this.#chosen(choice, "");
    this.#state = "head";
    this.#head = "";
    return choice ? "" : head;
  }

  /** A whole reply (the CLI's final message) without its choice line. */
  strip(reply: string): string {
    const body = reply.trimStart();
    const end = body.indexOf("\n");
    const first = end < 0 ? body : body.slice(0, end);
    if (!parseChoiceLine(first, this.#count)) return reply;
    return end < 0 ? "" : body.slice(end + 1).trimStart();
  }

  #pass(): string {
    const head = this.#head;
    this.#head = "";
    this.#state = "pass";
    return head;
  }

  #chosen(choice: ChangeChoice, rest: string): string {
    this.#choice = choice;
    this.#onChoice(choice);
    this.#head = "";
    this.#state = "blank";
    return this.#skipBlank(rest);
  }

  #skipBlank(text: string): string {
    const kept = text.trimStart();
    if (kept) this.#state = "pass";
    return kept;
  }
}
