/**
 * A stand-in for providers' prompt caches, so a stub upstream can report cache reads and writes
 * the way the real APIs would for the same sequence of requests:
 *
 * - Anthropic (explicit): the prompt is read as blocks (tools, system, messages); an entry is
 *   written for the prefix ending at each `cache_control` breakpoint; a request reads the longest
 *   entry found at a breakpoint or up to 20 blocks before it, and writes from there to its last
 *   breakpoint. Prefixes under 1024 tokens are not cached.
 * - OpenAI and Gemini (automatic): the longest previously seen prefix of the prompt's text, from
 *   1024 tokens on in steps of 128, is read.
 *
 * Tokens are estimated at four characters each. Entries never expire (a bench session is short).
 */
import { createHash } from "node:crypto";

export const CHARS_PER_TOKEN = 4;
export const MIN_CACHED_TOKENS = 1024;
/** How many blocks before a breakpoint Anthropic looks for an earlier entry. */
export const LOOKBACK_BLOCKS = 20;
const STEP_TOKENS = 128;

export function tokensOf(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** One request's input as the cache sees it. */
export interface CacheReading {
  /** Input tokens in all. */
  total: number;
  /** Of them, read from the cache. */
  read: number;
  /** Of them, written to the cache. */
  write: number;
}

/** A block of an Anthropic prompt: its text and whether it carries a breakpoint. */
export interface PromptBlock {
  text: string;
  breakpoint: boolean;
}

type Json = Record<string, unknown>;

function chain(previous: string, text: string): string {
  return createHash("sha256").update(previous).update("\u0001").update(text).digest("hex");
}

/** A content block's text as the model reads it. */
function blockText(block: unknown): string {
  if (typeof block === "string") return block;
  const b = (block ?? {}) as Json;
  if (typeof b.text === "string") return b.text;
  if (b.type === "tool_use") return `${b.name} ${JSON.stringify(b.input)}`;
  if (b.type === "tool_result") {
    const content = b.content;
    return typeof content === "string"
      ? content
      : Array.isArray(content)
      ? content.map(blockText).join("\n")
      : "";
  }
  if (typeof b.thinking === "string") return b.thinking;
  const { cache_control: _, ...rest } = b;
  return JSON.stringify(rest);
}

const marked = (value: unknown) => ((value ?? {}) as Json).cache_control !== undefined;

/** An Anthropic Messages body as blocks in the order the API reads them. */
export function anthropicBlocks(body: Json): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  for (const tool of (body.tools ?? []) as Json[]) {
    const { cache_control: _, ...rest } = tool;
    blocks.push({ text: JSON.stringify(rest), breakpoint: marked(tool) });
  }
  const system = body.system;
  if (typeof system === "string") blocks.push({ text: system, breakpoint: false });
  for (const block of Array.isArray(system) ? system : []) {
    blocks.push({ text: blockText(block), breakpoint: marked(block) });
  }
  for (const message of (body.messages ?? []) as Json[]) {
    const content = message.content;
    const list = typeof content === "string" ? [content] : (content ?? []) as unknown[];
    list.forEach((block, i) => {
      const text = blockText(block);
      blocks.push({ text: i === 0 ? `${message.role}: ${text}` : text, breakpoint: marked(block) });
    });
  }
  return blocks;
}

/** The Anthropic cache: entries by prefix hash, per model. */
export class ExplicitCache {
  #entries = new Set<string>();

  /** Reads and writes for a request's blocks, and records what it writes. */
  use(model: string, blocks: readonly PromptBlock[]): CacheReading {
    const hashes: string[] = [];
    const tokens: number[] = [];
    let hash = model;
    let chars = 0;
    for (const block of blocks) {
      hash = chain(hash, block.text);
      chars += block.text.length;
      hashes.push(hash);
      tokens.push(tokensOf(chars));
    }
    const total = tokens.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let hit = -1;
    for (const b of breakpoints) {
      for (let j = b; j >= Math.max(0, b - LOOKBACK_BLOCKS + 1); j--) {
        if (this.#entries.has(hashes[j])) {
          hit = Math.max(hit, j);
          break;
        }
      }
    }
    const read = hit >= 0 ? tokens[hit] : 0;
    const last = breakpoints.at(-1) ?? -1;
    const write = last > hit && tokens[last] >= MIN_CACHED_TOKENS ? tokens[last] - read : 0;
    for (const b of breakpoints) {
      if (tokens[b] >= MIN_CACHED_TOKENS) this.#entries.add(hashes[b]);
    }
    return { total, read, write };
  }
}

/** The OpenAI / Gemini cache: the longest seen prefix, in steps, per model. */
export class AutomaticCache {
  #entries = new Set<string>();

  use(model: string, text: string): CacheReading {
    const first = MIN_CACHED_TOKENS * CHARS_PER_TOKEN;
    const step = STEP_TOKENS * CHARS_PER_TOKEN;
    let hash = chain(model, text.slice(0, first));
    let read = 0;
    const seen: string[] = [];
    for (let end = first; end <= text.length; end += step) {
      if (end > first) hash = chain(hash, text.slice(end - step, end));
      if (this.#entries.has(hash)) read = tokensOf(end);
      seen.push(hash);
    }
    for (const h of seen) this.#entries.add(h);
    return { total: tokensOf(text.length), read, write: 0 };
  }
}

/** A Chat Completions or Responses body's input as one text, in reading order. */
export function openaiText(body: Json): string {
  const parts: string[] = [];
  for (const tool of (body.tools ?? []) as unknown[]) parts.push(JSON.stringify(tool));
  if (typeof body.instructions === "string") parts.push(body.instructions);
  const items = (body.messages ?? body.input ?? []) as unknown[];
  for (const item of typeof items === "string" ? [items] : items) {
    const it = (item ?? {}) as Json;
    const content = it.content ?? it.output ?? it.arguments ?? "";
    const text = typeof content === "string"
      ? content
      : Array.isArray(content)
      ? content.map(blockText).join("\n")
      : JSON.stringify(content);
    parts.push(`${it.role ?? it.type}: ${text}`);
  }
  return parts.join("\n");
}

/** A Gemini generateContent body's input as one text, in reading order. */
export function geminiText(body: Json): string {
  const parts: string[] = [];
  for (const tool of (body.tools ?? []) as unknown[]) parts.push(JSON.stringify(tool));
  const system = (body.systemInstruction ?? {}) as Json;
  for (const part of (system.parts ?? []) as Json[]) parts.push(String(part.text ?? ""));
  for (const content of (body.contents ?? []) as Json[]) {
    const texts = ((content.parts ?? []) as Json[]).map((p) =>
      typeof p.text === "string" ? p.text : JSON.stringify(p)
    );
    parts.push(`${content.role}: ${texts.join("\n")}`);
  }
  return parts.join("\n");
}
