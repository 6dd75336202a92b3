/**
 * The answer channel of one turn: what has been sent, and reconciliation of each writer's
 * final text with the deltas it streamed.
 */

/** What was written to the answer channel, and reconciliation of each writer's final text. */
export class AnswerWriter {
  text = "";
  #segment = "";
  #begin: () => void;
  #push: (text: string) => void;

  constructor(begin: () => void, push: (text: string) => void) {
    this.#begin = begin;
    this.#push = push;
  }

  get started(): boolean {
    return this.text.length > 0;
  }

  /** Text streamed by the current writer. */
  get segment(): string {
    return this.#segment;
  }

  write(text: string): void {
    if (!text) return;
    if (!this.started) this.#begin();
    this.text += text;
    this.#segment += text;
    this.#push(text);
  }

  /** The next writer (e.g. a fallback synthesizer) starts. */
  newSegment(): void {
    this.#segment = "";
  }

  /**
   * A writer finished with `final` as its answer: send whatever of it the deltas did not
   * already carry (all of it when nothing streamed).
   */
  complete(final: string): void {
    const streamed = this.#segment;
    if (!final.trim() || streamed.includes(final.trim())) return;
    if (!streamed) this.write(final);
    else if (final.startsWith(streamed)) this.write(final.slice(streamed.length));
    else this.write(`\n\n${final}`);
  }
}
