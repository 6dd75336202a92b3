/**
 * The answer channel of one turn: what has been sent, an agent's text held back until it is
 * known to be answer rather than narration before a tool use, and reconciliation of each
 * writer's final text with the deltas it streamed.
 */

/**
 * An agent's text is held until this many characters have come without a tool use. Narration
 * before a tool ("Let me read the config first.") is a sentence or two; an answer longer than
 * this starts streaming live while the agent still writes it.
 */
export const NARRATION_HOLD_CHARS = 400;

/** What was written to the answer channel, and reconciliation of each writer's final text. */
export class AnswerWriter {
  text = "";
  /** Text the current writer sent to the answer channel. */
  #segment = "";
  /** The current writer's text since its last tool use, not yet sent. */
  #held = "";
  /** The current writer's text since its last tool use is being sent live. */
  #live = false;
  #begin: () => void;
  #push: (text: string) => void;

  /** `begin` is called once, right before the first text; `push` sends text to the channel. */
  constructor(begin: () => void, push: (text: string) => void) {
    this.#begin = begin;
    this.#push = push;
  }

  get started(): boolean {
    return this.text.length > 0;
  }

  /** Text of the current writer: sent, and held back since its last tool use. */
  get segment(): string {
    return this.#segment + this.#held;
  }

  /** Text of the current writer that reached the answer channel. */
  get sent(): string {
    return this.#segment;
  }

  /** Sends text at once (the gateway's own notes, or a reply known to be final). */
  write(text: string): void {
    if (!text) return;
    if (!this.started) this.#begin();
    this.text += text;
    this.#segment += text;
    this.#push(text);
  }

  /**
   * An agent's live text: held while it may still be narration before a tool use, sent once it
   * is long enough to be the answer (and from then on as it comes).
   */
  stream(text: string): void {
    if (!text) return;
    if (this.#live) return this.write(text);
    this.#held += text;
    if (this.#held.length >= NARRATION_HOLD_CHARS) this.#release();
  }

  /**
   * The writing agent used a tool: what it wrote since its last tool use was narration, and is
   * returned (for the progress channel) unless it already went out as answer.
   */
  toolUsed(): string {
    const narration = this.#held.trim();
    this.#held = "";
    this.#live = false;
    return narration;
  }

  /** The next writer (e.g. a fallback synthesizer) starts. */
  newSegment(): void {
    this.#segment = "";
    this.#held = "";
    this.#live = false;
  }

  /**
   * A writer finished with `final` as its answer (its message after its last tool use): send
   * whatever of it the deltas did not already carry (all of it when nothing streamed).
   */
  complete(final: string): void {
    if (!this.#segment) {
      // Nothing of this writer went out: its final message, else what it wrote last.
      const answer = final.trim() ? final : this.#held;
      this.#held = "";
      this.write(this.started ? answer : answer.trimStart());
      return;
    }
    if (this.#held) this.#release();
    const streamed = this.#segment;
    if (!final.trim() || streamed.includes(final.trim())) return;
    if (final.startsWith(streamed)) this.write(final.slice(streamed.length));
    else this.write(`\n\n${final}`);
  }

  /** The held text is the answer: send it, apart from earlier text by a blank line. */
  #release(): void {
    let text = this.#held;
    this.#held = "";
    this.#live = true;
    if (!this.#segment) text = this.started ? text : text.trimStart();
    else if (!/\n\s*$/.test(this.#segment)) text = `\n\n${text.trimStart()}`;
    this.write(text);
  }
}
