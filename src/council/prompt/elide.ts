/**
 * Fits a conversation into a prompt budget by eliding its oldest parts first, in steps that stay
 * put from one turn to the next so the prompt's beginning (and a provider's cache of it) survives.
 *
 * In order, until the prompt fits:
 * 1. the oldest tool results, tool inputs and assistant texts are replaced by markers;
 * 2. the oldest entries of any kind are collapsed, each run into one marker;
 * 3. as a last resort, the longest of what is never elided (the system prompt, the user's last
 *    ask, the latest message with its tool results and the calls they answer) is cut in the
 *    middle, marked, so that even a transcript the host itself could send fits a smaller child.
 *
 * Steps 1 and 2 cut at the first point where the characters saved reach a whole number of
 * quanta: the cut depends only on the conversation's (unchanging) beginning and on how many
 * quanta are needed, so it moves rarely and the text before it stays byte-identical.
 */
import type { PromptEntry } from "../../agents/types.ts";
import { entryText } from "../../agents/prompt_text.ts";
import { collapsedEntry, elidedEntry, promptEntry, shortenMiddle } from "./entries.ts";
import { stripScaffolding } from "../request/ask.ts";
import type { TranscriptEntry } from "../types.ts";

/** Shorter entries are kept whole: their marker would save next to nothing. */
const MIN_ELIDED_CHARS = 240;
/** A text cut in the middle keeps at least this much. */
const MIN_SHORTENED_CHARS = 400;
/** Entries are joined by a blank line. */
const SEPARATOR_CHARS = 2;

interface FitLimits {
  /** The whole prompt's budget, in characters. */
  budgetChars: number;
  /** Characters of everything besides the system prompt's text and the entries. */
  fixedChars: number;
  /** The step in which elision advances. */
  quantumChars: number;
}

/** What was left out or cut, for the note that tells the child. */
export interface Elision {
  toolResults: number;
  toolInputs: number;
  assistantTexts: number;
  /** Entries collapsed into run markers (step 2). */
  collapsed: number;
  /** Texts cut in the middle (step 3). */
  shortened: number;
  /** Characters left out in all. */
  chars: number;
}

interface FittedConversation {
  system: string;
  entries: PromptEntry[];
  /** Absent when everything fitted as it was. */
  elision?: Elision;
}

interface Slot {
  source: TranscriptEntry;
  full: PromptEntry;
  shown: PromptEntry;
  /** Never elided or collapsed (only cut in the middle, as a last resort). */
  guarded: boolean;
  collapsed: boolean;
}

/**
 * The user's last ask (the last user text that is more than injected reminders), the latest
 * message (with its tool results) and the calls it answers.
 */
function guardedIndices(transcript: readonly TranscriptEntry[]): Set<number> {
  const guarded = new Set<number>();
  const asked = transcript.findLastIndex((e) => e.kind === "user" && stripScaffolding(e.text));
  const lastAsk = asked >= 0 ? asked : transcript.findLastIndex((e) => e.kind === "user");
  if (lastAsk >= 0) guarded.add(lastAsk);
  const answered = new Set<string>();
  for (let i = transcript.length - 1; i >= 0; i--) {
    const entry = transcript[i];
    if (entry.kind === "assistant" || entry.kind === "tool_call") break;
    guarded.add(i);
    if (entry.kind === "tool_result") answered.add(entry.id);
  }
  transcript.forEach((e, i) => {
    if (e.kind === "tool_call" && answered.has(e.id)) guarded.add(i);
  });
  return guarded;
}

const size = (entry: PromptEntry) => entryText(entry).length + SEPARATOR_CHARS;

function collapsedRuns(slots: readonly Slot[]): PromptEntry[] {
  const out: PromptEntry[] = [];
  let run: Slot[] = [];
  const flush = () => {
    if (run.length === 0) return;
    const chars = run.reduce((n, s) => n + s.full.text.length, 0);
    out.push(collapsedEntry(run.map((s) => s.source.kind), chars));
    run = [];
  };
  for (const slot of slots) {
    if (slot.collapsed) run.push(slot);
    else {
      flush();
      out.push(slot.shown);
    }
  }
  flush();
  return out;
}

class Fitting {
  system: string;
  readonly slots: Slot[];

  constructor(system: string, transcript: readonly TranscriptEntry[], readonly limits: FitLimits) {
    this.system = system;
    const guarded = guardedIndices(transcript);
    this.slots = transcript.map((source, i) => {
      const full = promptEntry(source);
      return { source, full, shown: full, guarded: guarded.has(i), collapsed: false };
    });
  }

  get entries(): PromptEntry[] {
    return collapsedRuns(this.slots);
  }

  get over(): number {
    const entries = this.entries.reduce((n, e) => n + size(e), 0);
    return this.system.trim().length + this.limits.fixedChars + entries - this.limits.budgetChars;
  }

  /** How many quanta of savings cover the overrun (0 when it fits). */
  #quanta(): number {
    return Math.max(0, Math.ceil(this.over / this.limits.quantumChars));
  }

  /** Step 1: markers for the oldest tool results, tool inputs and assistant texts. */
  elideOldest(): void {
    const target = this.#quanta() * this.limits.quantumChars;
    let saved = 0;
    for (const slot of this.slots) {
      if (saved >= target) return;
      const kind = slot.source.kind;
      if (slot.guarded || kind === "user" || kind === "system") continue;
      if (slot.full.text.length < MIN_ELIDED_CHARS) continue;
      slot.shown = elidedEntry(slot.source, slot.full);
      saved += size(slot.full) - size(slot.shown);
    }
  }

  /** Step 2: the oldest unguarded entries collapsed into run markers. */
  collapseOldest(): void {
    let quanta = this.#quanta();
    let saved = 0;
    const open = this.slots.filter((s) => !s.guarded);
    let next = 0;
    while (this.over > 0 && next < open.length) {
      while (next < open.length && saved < quanta * this.limits.quantumChars) {
        open[next].collapsed = true;
        saved += size(open[next].shown);
        next++;
      }
      quanta++;
    }
  }

  /** Step 3: the longest guarded text (or the system prompt) cut in the middle, until it fits. */
  shortenLongest(): number {
    let shortened = 0;
    while (this.over > 0) {
      const texts = this.slots.filter((s) => s.guarded).map((s) => s.shown.text.length);
      const longest = Math.max(this.system.length, ...texts);
      if (longest <= MIN_SHORTENED_CHARS) break;
      const max = Math.max(MIN_SHORTENED_CHARS, longest - this.over - 1);
      if (this.system.length === longest) this.system = shortenMiddle(this.system, max);
      else {
        const slot = this.slots.find((s) => s.guarded && s.shown.text.length === longest)!;
        slot.shown = { ...slot.shown, text: shortenMiddle(slot.shown.text, max) };
      }
      shortened++;
    }
    return shortened;
  }
}

function elisionOf(fitting: Fitting, system: string, shortened: number): Elision | undefined {
  const elision: Elision = {
    toolResults: 0,
    toolInputs: 0,
    assistantTexts: 0,
    collapsed: 0,
    shortened,
    chars: Math.max(0, system.length - fitting.system.length),
  };
  for (const slot of fitting.slots) {
    if (slot.collapsed) {
      elision.collapsed++;
      elision.chars += slot.full.text.length;
    } else if (slot.shown !== slot.full) {
      elision.chars += Math.max(0, slot.full.text.length - slot.shown.text.length);
      if (slot.guarded) continue;
      if (slot.source.kind === "tool_result") elision.toolResults++;
      else if (slot.source.kind === "tool_call") elision.toolInputs++;
      else elision.assistantTexts++;
    }
  }
  return elision.chars > 0 || elision.collapsed > 0 || shortened > 0 ? elision : undefined;
}

/** The conversation (and system prompt) fitted into the limits, with what was left out. */
export function fitConversation(
  system: string,
  transcript: readonly TranscriptEntry[],
  limits: FitLimits,
): FittedConversation {
  const fitting = new Fitting(system, transcript, limits);
  if (fitting.over > 0) fitting.elideOldest();
  if (fitting.over > 0) fitting.collapseOldest();
  const shortened = fitting.over > 0 ? fitting.shortenLongest() : 0;
  const elision = elisionOf(fitting, system, shortened);
  return { system: fitting.system, entries: fitting.entries, ...(elision ? { elision } : {}) };
}
