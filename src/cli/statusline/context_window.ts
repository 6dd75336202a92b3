/**
 * The status line's context part: how full Claude Code's context window is (`ctx 12% of 104k`),
 * read from the JSON Claude Code gives the status line, and whether that window is the
 * council's (`ctx 12% of 200k · council 104k` when it is not: set up without `connect`).
 */
import { z } from "zod";

const ContextWindowSchema = z.object({
  context_window: z.object({
    context_window_size: z.number().positive(),
    used_percentage: z.number().min(0).nullable().optional(),
  }),
});

/** Claude Code's window and how much of it is used, when its stdin JSON says so. */
export function hostContextOf(
  stdin: string,
): { windowTokens: number; usedPercent?: number } | undefined {
  try {
    const parsed = ContextWindowSchema.safeParse(JSON.parse(stdin));
    if (!parsed.success) return undefined;
    const { context_window_size, used_percentage } = parsed.data.context_window;
    return {
      windowTokens: context_window_size,
      ...(typeof used_percentage === "number" ? { usedPercent: used_percentage } : {}),
    };
  } catch {
    return undefined;
  }
}

/** `103k`, `1.0M`. */
export function shortTokens(tokens: number): string {
  return tokens >= 1_000_000
    ? `${(tokens / 1_000_000).toFixed(1)}M`
    : `${Math.round(tokens / 1000)}k`;
}

/**
 * `ctx 12% of 103k` once Claude Code has counted anything, plus the council's window when Claude
 * Code counts with another one; nothing before the first count (the line stays short).
 */
export function contextPart(
  host: { windowTokens: number; usedPercent?: number } | undefined,
  councilTokens: number | undefined,
): string | undefined {
  if (host?.usedPercent === undefined) return undefined;
  const part = `ctx ${Math.round(host.usedPercent)}% of ${shortTokens(host.windowTokens)}`;
  return councilTokens !== undefined && councilTokens !== host.windowTokens
    ? `${part} · council ${shortTokens(councilTokens)}`
    : part;
}
