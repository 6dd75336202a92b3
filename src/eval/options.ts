/** `eval`'s command line: the suite, the arms, the limits, the host and where results go. */
import { parseArgs } from "node:util";
import { UsageError } from "../cli/args.ts";
import { type HostName, HOSTS } from "./host.ts";

export interface EvalOptions {
  suite: string;
  config?: string;
  arms: string[];
  runs: number;
  concurrency: number;
  /** Stop starting runs once the recorded spend reaches this (0: no cap). */
  maxUsd: number;
  host: HostName;
  hostCommand?: string;
  out: string;
  json: boolean;
  help: boolean;
}

const OPTIONS = {
  config: { type: "string" },
  arm: { type: "string", multiple: true },
  runs: { type: "string" },
  concurrency: { type: "string" },
  "max-usd": { type: "string" },
  host: { type: "string" },
  "host-command": { type: "string" },
  out: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function count(option: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new UsageError(`--${option}: ${JSON.stringify(raw)} is not a count from 1 to ${max}`);
  }
  return Number(raw);
}

function dollars(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value)) {
    throw new UsageError(`--max-usd: ${JSON.stringify(raw)} is not an amount of dollars`);
  }
  return value;
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    throw new UsageError(`eval: ${(err as Error).message.split(".")[0]}`);
  }
}

/** Reads `eval`'s own arguments (everything after `eval`); throws UsageError. */
export function parseEvalArgs(argv: string[], inherited: { config?: string } = {}): EvalOptions {
  const { values, positionals } = parse(argv);
  const help = values.help ?? false;
  if (positionals.length > 1) throw new UsageError(`eval: unexpected argument ${positionals[1]}`);
  if (!help && positionals.length === 0) {
    throw new UsageError("eval: which suite? give a directory of tasks (e.g. eval/sample)");
  }
  const host = values.host ?? "claude";
  if (!(HOSTS as readonly string[]).includes(host)) {
    throw new UsageError(`--host: ${JSON.stringify(host)} is not ${HOSTS.join(" or ")}`);
  }
  return {
    suite: positionals[0] ?? "",
    config: values.config ?? inherited.config,
    arms: values.arm ?? [],
    runs: count("runs", values.runs, 1, 1000),
    concurrency: count("concurrency", values.concurrency, 1, 64),
    maxUsd: dollars(values["max-usd"]),
    host: host as HostName,
    hostCommand: values["host-command"],
    out: values.out ?? "eval-out",
    json: values.json ?? false,
    help,
  };
}
