/**
 * The synthesizer's decision on a fanned-out answer turn, read from the start of its streamed
 * reply: a leading `{"choose": "B"}` picks candidate B as written; anything else is an answer it
 * writes itself, which streams on at once (through the choice-line reader when there are changes).
 */
import type { TextFilter } from "../calls/calls.ts";
import { candidateLabel } from "../prompt/prompts.ts";

export type PickDecision =
  /** Candidate `index` (as shown to the synthesizer) is sent as written. */
  | { kind: "picked"; index: number }
  /** The synthesizer writes the answer: its text is the answer. */
  | { kind: "written" }
  /** It replied with a choice that names no candidate (out of range or malformed). */
  | { kind: "invalid"; reason: string };

/** Text held while undecided: a pick is a short object, anything longer is an answer. */
const MAX_HEAD = 80;
/** An opening code fence (```json) or a single backtick, before the object. */
const FENCE = /^`{1,3}(?:json)?\s*/i;
/** A head still being typed that could become a fence. */
const PARTIAL_FENCE = /^`{1,3}[a-z]{0,4}$/i;
const CHOOSE_KEY = '{"choose":';

/** The decision a whole reply's start states, or undefined while it may still be a pick. */
export function decideHead(head: string, count: number, final: boolean): PickDecision | undefined {
  const text = head.trimStart();
  if (!text) return final ? { kind: "written" } : undefined;
  if (!final && PARTIAL_FENCE.test(text)) return undefined;
  const body = text.replace(FENCE, "");
  if (!body) return final ? { kind: "written" } : undefined;
  if (!body.startsWith("{")) return { kind: "written" };
  const compact = body.replace(/\s+/g, "");
  const keyed = compact.startsWith(CHOOSE_KEY);
  if (!keyed && !CHOOSE_KEY.startsWith(compact)) return { kind: "written" };
  const close = body.indexOf("}");
  if (close < 0) {
    if (!final && body.length <= MAX_HEAD) return undefined;
    return keyed ? { kind: "invalid", reason: "an unfinished choice" } : { kind: "written" };
  }
  if (!keyed) return { kind: "written" };
  return pickOf(body.slice(0, close + 1), count);
}

/** `{"choose": "B"}` (or 2, "2", "Candidate B") as a candidate among `count`. */
function pickOf(object: string, count: number): PickDecision {
  let raw: unknown;
  try {
    raw = (JSON.parse(object) as Record<string, unknown>).choose;
  } catch {
    return { kind: "invalid", reason: `a malformed choice ${object}` };
  }
  const word = typeof raw === "string" ? raw.trim().replace(/^candidate\s+/i, "") : raw;
  const index = typeof word === "number" || /^\d+$/.test(String(word))
    ? Number(word) - 1
    : Array.from({ length: count }, (_, i) => candidateLabel(i))
      .indexOf(String(word).toUpperCase());
  if (Number.isInteger(index) && index >= 0 && index < count) return { kind: "picked", index };
  return { kind: "invalid", reason: `a choice of ${JSON.stringify(raw)} among ${count}` };
}

/**
 * Holds back the start of each run of a synthesizer's text (from the start, or after a tool use)
 * until it is known whether it is a pick; reports each run's decision through `onDecided`, then
 * passes a written answer on as it comes and nothing after a pick or an invalid choice.
 */
export class PickDecider implements TextFilter {
  #count: number;
  #inner: TextFilter | undefined;
  #onDecided: (decision: PickDecision) => void;
  #head = "";
  #run: "head" | "written" | "ended" = "head";
  #decision: PickDecision | undefined;

  /** `inner` reads a written answer further (the choice line of changes), if given. */
  constructor(
    count: number,
    onDecided: (decision: PickDecision) => void,
    inner?: TextFilter,
  ) {
    this.#count = count;
    this.#onDecided = onDecided;
    this.#inner = inner;
  }

  /** The last decision stated (undefined until the reply's start was read). */
  get decision(): PickDecision | undefined {
    return this.#decision;
  }

  feed(text: string): string {
    if (this.#run === "ended") return "";
    if (this.#run === "written") return this.#pass(text);
    this.#head += text;
    return this.#decide(false);
  }

  flush(): string {
    const out = this.#run === "head" && this.#head ? this.#decide(true) : "";
    const rest = this.#run === "ended" ? "" : this.#inner?.flush() ?? "";
    // After a tool use the reply starts over: its next run may open with the pick.
    if (this.#run === "written") this.#run = "head";
    return out + rest;
  }

  /** A whole reply that did not stream (a CLI's final message only): its decision. */
  decideWhole(reply: string): PickDecision {
    const decision = decideHead(reply, this.#count, true) ?? { kind: "written" };
    this.#decided(decision);
    return decision;
  }

  #decide(final: boolean): string {
    const decision = decideHead(this.#head, this.#count, final);
    if (!decision) return "";
    const head = this.#head;
    this.#head = "";
    this.#decided(decision);
    if (decision.kind !== "written") {
      this.#run = "ended";
      return "";
    }
    this.#run = "written";
    return this.#pass(head);
  }

  #decided(decision: PickDecision): void {
    this.#decision = decision;
    this.#onDecided(decision);
  }

  #pass(text: string): string {
    return this.#inner ? this.#inner.feed(text) : text;
  }
}
