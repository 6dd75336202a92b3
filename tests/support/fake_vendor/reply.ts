/**
 * What the fake vendor answers, before any vendor's wire format: a reply's parts (text or a tool
 * call), its token usage, the SSE frames a vendor renders it to (each saying how many output
 * tokens it carries, so the pacer can time it), and the HTTP failures it can reply with instead.
 */
import { tokenPieces } from "./latency.ts";

/** One part of a reply: text, or a call of a tool with its input. */
export type Part =
  | { text: string }
  | { tool: { name: string; input: Record<string, unknown>; id?: string } };

/** Token usage as every vendor reports it, in the fake's own terms. */
export interface Usage {
  /** Input tokens in all (read, written and neither). */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** A reply ready to render: its parts split into token pieces, and its usage. */
export interface Rendering {
  id: string;
  model: string;
  parts: RenderedPart[];
  usage: Usage;
}

export type RenderedPart =
  | { kind: "text"; pieces: string[]; text: string }
  | { kind: "tool"; name: string; id: string; input: Record<string, unknown>; pieces: string[] };

/** One SSE frame: `event:` name (none for data-only protocols), data, and output tokens carried. */
export interface Frame {
  event?: string;
  data: unknown;
  tokens: number;
}

/** An HTTP failure: the status, the vendor's error body, an optional `retry-after` (seconds). */
export interface Failure {
  status: number;
  message?: string;
  retryAfterS?: number;
}

/** Splits each part into token pieces and counts the output tokens. */
export function rendering(
  parts: readonly Part[],
  model: string,
  id: string,
  input: Omit<Usage, "output">,
): Rendering {
  const rendered: RenderedPart[] = parts.map((part, i) => {
    if ("text" in part) return { kind: "text", pieces: tokenPieces(part.text), text: part.text };
    const json = JSON.stringify(part.tool.input);
    return {
      kind: "tool",
      name: part.tool.name,
      id: part.tool.id ?? `call_${id}_${i}`,
      input: part.tool.input,
      pieces: tokenPieces(json),
    };
  });
  const output = rendered.reduce((sum, p) => sum + p.pieces.length, 0);
  return { id, model, parts: rendered, usage: { ...input, output } };
}

/** A frame's wire text. */
export function encodeFrame(frame: Frame): string {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
}

/** The reply's whole text (text parts joined), e.g. for a recap in a record. */
export function textOf(parts: readonly Part[]): string {
  return parts.map((p) => ("text" in p ? p.text : "")).join("");
}
