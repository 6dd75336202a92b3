/** An attack as a row of the report: what was tried, what must hold, what was seen. */
import type { AttackContext } from "./gateway.ts";

export interface Outcome {
  observed: string;
  pass: boolean;
}

export interface Attack {
  id: string;
  /** The point of issue 18 it replays. */
  point: number;
  attack: string;
  expected: string;
  run(context: AttackContext): Promise<Outcome>;
}

export interface Row {
  id: string;
  point: number;
  attack: string;
  expected: string;
  observed: string;
  result: "pass" | "fail" | "error";
}

/** Runs one attack; a thrown error is a row too (the attack could not be carried out). */
export async function runAttack(attack: Attack, context: AttackContext): Promise<Row> {
  const { id, point, expected } = attack;
  try {
    const { observed, pass } = await attack.run(context);
    return { id, point, attack: attack.attack, expected, observed, result: pass ? "pass" : "fail" };
  } catch (error) {
    const observed = `could not run: ${(error as Error)?.message ?? error}`.slice(0, 300);
    return { id, point, attack: attack.attack, expected, observed, result: "error" };
  }
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/** The rows as a Markdown table. */
export function markdownTable(rows: Row[]): string {
  const lines = [
    "| # | Attack | Expected | Observed | Result |",
    "|---|--------|----------|----------|--------|",
    ...rows.map((row) =>
      `| ${row.point} | ${cell(row.attack)} | ${cell(row.expected)} | ${cell(row.observed)} | ` +
      `${row.result} |`
    ),
  ];
  return lines.join("\n");
}

/** Picks the attacks named in `only` (ids or point numbers, comma-separated); all when empty. */
export function selectAttacks(all: readonly Attack[], only: string | undefined): Attack[] {
  if (!only) return [...all];
  const wanted = only.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !all.some((a) => a.id === w || String(a.point) === w));
  if (unknown.length) {
    throw new Error(`unknown attack ${unknown.join(", ")} (known: ${all.map((a) => a.id)})`);
  }
  return all.filter((a) => wanted.includes(a.id) || wanted.includes(String(a.point)));
}
