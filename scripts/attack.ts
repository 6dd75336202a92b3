/**
 * Replays the attacks of issue 18 against a real gateway over loopback (a subprocess per
 * attack, fake agents, a temporary directory) and prints a table of attack, expected and
 * observed. Every loop is bounded; the run ends by itself.
 *
 *   deno run -A scripts/attack.ts [--quick] [--only id,point,…] [--json]
 *
 * `--quick` shrinks counts and time-outs (seconds instead of minutes). Exits 1 when an attack
 * got through. Needs -A: it spawns gateways, reads their /proc status and runs `ps`.
 */
import { parseArgs } from "node:util";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONNECTION_ATTACKS } from "./attack/connections.ts";
import type { AttackContext } from "./attack/gateway.ts";
import { LIMIT_ATTACKS } from "./attack/limits.ts";
import { OTHER_ATTACKS } from "./attack/others.ts";
import { markdownTable, type Row, runAttack, selectAttacks } from "./attack/table.ts";
import { TOKEN_ATTACKS } from "./attack/tokens.ts";

export const ATTACKS = [
  ...CONNECTION_ATTACKS,
  ...OTHER_ATTACKS.filter((a) => a.point === 2),
  ...LIMIT_ATTACKS,
  ...OTHER_ATTACKS.filter((a) => a.point !== 2),
  ...TOKEN_ATTACKS,
].sort((a, b) => a.point - b.point);

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs the chosen attacks one after another; `onRow` hears each row as it is done. */
export async function runAttacks(
  options: { quick: boolean; only?: string; onRow?: (row: Row) => void },
): Promise<Row[]> {
  const attacks = selectAttacks(ATTACKS, options.only);
  const dir = await Deno.makeTempDir({ prefix: "council-attack-" });
  const context: AttackContext = { quick: options.quick, dir, repoRoot: REPO_ROOT };
  const rows: Row[] = [];
  try {
    for (const attack of attacks) {
      const row = await runAttack(attack, context);
      rows.push(row);
      options.onRow?.(row);
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return rows;
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(
      "Usage: deno run -A scripts/attack.ts [--quick] [--only id,point,…] [--json]\n\n" +
        ATTACKS.map((a) => `  ${String(a.point).padEnd(2)} ${a.id.padEnd(15)} ${a.attack}`)
          .join("\n"),
    );
    return 0;
  }
  const rows = await runAttacks({
    quick: values.quick,
    only: values.only,
    onRow: (row) => console.error(`[attack] ${row.id}: ${row.result} — ${row.observed}`),
  });
  console.log(values.json ? JSON.stringify(rows, null, 2) : markdownTable(rows));
  return rows.every((row) => row.result === "pass") ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
