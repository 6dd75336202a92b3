/**
 * The transcript as prompt entries: one per transcript entry, with the role it belongs to and a
 * tag saying what it is, and the marker that stands in for it when it is elided.
 */
import type { PromptEntry } from "../../agents/types.ts";
import type { TranscriptEntry } from "../types.ts";

/** Every elision marker starts so; the child is told to look for it. */
export const ELIDED = "[elided to fit the context";

function tagOf(entry: TranscriptEntry): string {
  switch (entry.kind) {
    case "user":
      return "user";
    case "assistant":
      return "assistant";
    case "system":
      return "system note";
    case "tool_call":
      return `assistant called tool ${entry.name} (call ${entry.id})`;
    case "tool_result":
      return `result of call ${entry.id}${entry.isError ? ", an error" : ""}`;
  }
}

function roleOf(entry: TranscriptEntry): PromptEntry["role"] {
  return entry.kind === "assistant" || entry.kind === "tool_call" ? "assistant" : "user";
}

function bodyOf(entry: TranscriptEntry): string {
  return entry.kind === "tool_call" ? JSON.stringify(entry.input) ?? "null" : entry.text;
}

/** A transcript entry as the child sees it. */
export function promptEntry(entry: TranscriptEntry): PromptEntry {
  return { role: roleOf(entry), tag: tagOf(entry), text: bodyOf(entry) };
}

/** "12,345" (fixed locale: markers must be the same on every machine and every turn). */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** What an elided entry becomes: its tag kept, its text replaced by what was cut. */
export function elidedEntry(entry: TranscriptEntry, rendered: PromptEntry): PromptEntry {
  const chars = count(rendered.text.length);
  const what = entry.kind === "tool_result"
    ? `${chars} characters of tool output`
    : entry.kind === "tool_call"
    ? `${chars} characters of tool input`
    : entry.kind === "assistant"
    ? `${chars} characters of assistant text`
    : `${chars} characters`;
  return { ...rendered, text: `${ELIDED}: ${what}]` };
}

/** The one marker a run of collapsed entries becomes. */
export function collapsedEntry(kinds: readonly TranscriptEntry["kind"][], chars: number) {
  const names: Record<TranscriptEntry["kind"], string> = {
    user: "user message",
    assistant: "assistant message",
    system: "system note",
    tool_call: "tool call",
    tool_result: "tool result",
  };
  const tally = new Map<string, number>();
  for (const kind of kinds) tally.set(names[kind], (tally.get(names[kind]) ?? 0) + 1);
  const parts = [...tally].map(([name, n]) => `${n} ${name}${n === 1 ? "" : "s"}`);
  const entries = `${kinds.length} ${kinds.length === 1 ? "entry" : "entries"}`;
  return {
    role: "user" as const,
    tag: "gateway note",
    text: `${ELIDED}: ${entries} (${parts.join(", ")}; ${count(chars)} characters)]`,
  };
}

/** The text with its middle cut so that it is at most `max` characters, marked where cut. */
export function shortenMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `\n${ELIDED}: ${count(cut)} characters cut here]\n`;
  const room = Math.max(0, max - marker(text.length).length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}${marker(cut)}${tail > 0 ? text.slice(-tail) : ""}`;
}
