/**
 * `keys`: per-person API keys in the configured database — `create` prints a new key once,
 * `list` shows each key's budget and spend this period, `revoke` ends a key.
 */
import { type Config, ConfigError } from "../../config/mod.ts";
import { connectStore, type Store, StoreError } from "../../store/open_store.ts";
import { type ApiKeyRow, type Period, PERIODS } from "../../store/key_rows.ts";
import type { Parsed } from "../args.ts";
import { UsageError } from "../args.ts";
import type { CliIo } from "../io.ts";

async function openStore(config: Readonly<Config>): Promise<Store> {
  if (!config.database) {
    throw new ConfigError(
      "keys: no database configured: set `database: postgres://…` or SVC_DATABASE_URL",
    );
  }
  try {
    return await connectStore(config.database, { max: 1 });
  } catch (err) {
    if (err instanceof StoreError) throw new ConfigError(`keys: ${err.message}`);
    throw err;
  }
}

/** The budget in dollars given by --max-usd. */
export function parseMaxUsd(raw: string | undefined): number {
  if (raw === undefined) throw new UsageError("keys create: --max-usd is required (dollars)");
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0) {
    throw new UsageError(`--max-usd: ${JSON.stringify(raw)} is not an amount of dollars`);
  }
  return value;
}

export function parsePeriod(raw: string | undefined): Period {
  if (raw === undefined) return "month";
  if (!(PERIODS as readonly string[]).includes(raw)) {
    throw new UsageError(`--period: ${JSON.stringify(raw)} is not one of ${PERIODS.join(", ")}`);
  }
  return raw as Period;
}

/** One line per key: name, id, spend of budget, period, state. */
export function renderKeys(keys: ApiKeyRow[]): string {
  if (keys.length === 0) return "no keys\n";
  return keys.map((key) =>
    [
      key.name.padEnd(16),
      key.id.padEnd(14),
      `$${key.spentUsd.toFixed(2)} of $${key.maxUsd}`.padEnd(20),
      key.period === "none" ? "no period" : `per ${key.period}`,
      key.revokedAt ? `revoked ${key.revokedAt}` : `created ${key.createdAt}`,
    ].join("  ")
  ).join("\n") + "\n";
}

export async function keysCommand(args: Parsed, io: CliIo, load: () => Readonly<Config>) {
  const [action, ...rest] = args.positionals;
  if (action !== "create" && action !== "list" && action !== "revoke") {
    throw new UsageError(
      action === undefined
        ? "keys: create, list or revoke?"
        : `keys: unknown action ${JSON.stringify(action)} (expected create, list or revoke)`,
    );
  }
  if (action !== "revoke" && rest.length > 0) {
    throw new UsageError(`keys ${action}: unexpected argument ${rest[0]}`);
  }
  if (action === "revoke" && rest.length !== 1) {
    throw new UsageError("keys revoke: which key? keys revoke NAME|ID");
  }
  const input = action === "create"
    ? {
      name: args.name ?? "",
      maxUsd: parseMaxUsd(args.maxUsd),
      period: parsePeriod(args.period),
    }
    : undefined;
  if (input && !input.name.trim()) throw new UsageError("keys create: --name is required");
  const store = await openStore(load());
  try {
    if (input) {
      const { id, key } = await store.keys.create(input);
      io.stdout(
        `${key}\n` +
          `key ${id} for ${input.name}: $${input.maxUsd} ` +
          `${input.period === "none" ? "in all" : `per ${input.period}`}; ` +
          "it is shown only now (only its hash is stored)\n",
      );
      return 0;
    }
    if (action === "list") {
      const keys = await store.keys.list(Date.now());
      io.stdout(args.json ? `${JSON.stringify(keys, null, 2)}\n` : renderKeys(keys));
      return 0;
    }
    const revoked = await store.keys.revoke(rest[0]);
    if (revoked === 0) {
      io.stderr(`keys revoke: no live key named or with id ${JSON.stringify(rest[0])}\n`);
      return 1;
    }
    io.stdout(`revoked ${revoked} key${revoked === 1 ? "" : "s"}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
