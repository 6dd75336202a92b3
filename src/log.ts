/**
 * Logging setup: one record per line on stdout, human-readable text with a `[turn <id>]` prefix
 * or JSON lines, with every known secret masked before a line is written.
 */
import { configureSync, getLogger, type LogLevel, type LogRecord } from "@logtape/logtape";
import type { Logger } from "@logtape/logtape";
import { CREDENTIAL_VARIABLES, GATEWAY_TOKEN_VARIABLES } from "./secret_variables.ts";

export type { Logger };

/** The levels of SPEC §1.2. */
export type LevelName = "debug" | "info" | "warn" | "error";

const TO_LOGTAPE: Record<LevelName, LogLevel> = {
  debug: "debug",
  info: "info",
  warn: "warning",
  error: "error",
};

const FROM_LOGTAPE: Record<LogLevel, LevelName> = {
  trace: "debug",
  debug: "debug",
  info: "info",
  warning: "warn",
  error: "error",
  fatal: "error",
};

/** Root category; modules log under `["council-gateway", "<module>"]`. */
export const ROOT_CATEGORY = "council-gateway";

/** A module's logger. */
export function moduleLogger(module: string): Logger {
  return getLogger([ROOT_CATEGORY, module]);
}

/** Environment variables whose values are secrets: the agents' credential list plus ours. */
export const SECRET_ENV_VARS: readonly string[] = [
  "SVC_GATEWAY_TOKEN",
  ...GATEWAY_TOKEN_VARIABLES,
  ...CREDENTIAL_VARIABLES,
];

/** Secrets shorter than this are not masked: they would mangle ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** Collects the secrets to mask: the gateway token plus provider keys from the environment. */
export function collectSecrets(
  token: string | undefined,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): string[] {
  const values = [token, ...SECRET_ENV_VARS.map((name) => env(name))];
  return [...new Set(values.filter((v): v is string => !!v && v.length >= MIN_SECRET_LENGTH))];
}

/** How many secrets learnt at run time are kept (the oldest is forgotten first). */
const MAX_LEARNT_SECRETS = 64;
const learnt: string[] = [];
let learntVersion = 0;

/**
 * Masks `secret` in every log line from now on: for secrets that arrive at run time, such as a
 * provider key a request presents for its children (passApiKeys).
 */
export function maskSecret(secret: string): void {
  if (secret.length < MIN_SECRET_LENGTH || learnt.includes(secret)) return;
  learnt.push(secret);
  if (learnt.length > MAX_LEARNT_SECRETS) learnt.shift();
  learntVersion++;
}

/** Returns a function that replaces every occurrence of a secret (raw or JSON-escaped). */
export function createRedactor(secrets: readonly string[]): (line: string) => string {
  const needles = [
    ...new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])),
  ].filter((s) => s.length >= MIN_SECRET_LENGTH)
    // Longest first, so a secret containing another is masked whole.
    .sort((a, b) => b.length - a.length);
  if (needles.length === 0) return (line) => line;
  return (line) => {
    let out = line;
    for (const needle of needles) {
      if (out.includes(needle)) out = out.split(needle).join("***");
    }
    return out;
  };
}

function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The message with its template values substituted. */
export function renderMessage(record: LogRecord): string {
  return record.message.map((part, i) => (i % 2 === 0 ? String(part) : renderValue(part))).join(
    "",
  );
}

/** Properties that are not already shown by the message template, minus `turn`. */
function extraFields(record: LogRecord): [string, unknown][] {
  const template = typeof record.rawMessage === "string" ? record.rawMessage : "";
  return Object.entries(record.properties).filter(
    ([key]) => key !== "turn" && !template.includes(`{${key}}`),
  );
}

function fieldText(value: unknown): string {
  const text = renderValue(value);
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}

/** Human-readable line: `2026-11-21T05:12:00.000Z INFO  [turn ab12] message key=value`. */
export function formatText(record: LogRecord): string {
  const level = FROM_LOGTAPE[record.level].toUpperCase().padEnd(5);
  const turn = record.properties.turn;
  const prefix = turn === undefined ? "" : `[turn ${renderValue(turn)}] `;
  const fields = extraFields(record).map(([k, v]) => ` ${k}=${fieldText(v)}`).join("");
  const line = `${new Date(record.timestamp).toISOString()} ${level} ${prefix}${
    renderMessage(record)
  }${fields}`;
  // One record per line, whatever the message carries.
  return line.replace(/\r?\n/g, "\\n");
}

function jsonSafe(value: unknown): unknown {
  if (value instanceof Error) return value.message;
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** JSON line: `{"ts","level","msg","turn"?,"module",...fields}` (every property as a field). */
export function formatJson(record: LogRecord): string {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record.properties)) out[key] = jsonSafe(value);
  out.ts = new Date(record.timestamp).toISOString();
  out.level = FROM_LOGTAPE[record.level];
  out.msg = renderMessage(record);
  if (record.properties.turn !== undefined) out.turn = renderValue(record.properties.turn);
  out.module = record.category.slice(1).join(".") || record.category.join(".");
  try {
    return JSON.stringify(out);
  } catch {
    return JSON.stringify({ ts: out.ts, level: out.level, msg: out.msg, module: out.module });
  }
}

const encoder = new TextEncoder();

/** Writes the whole text to stdout synchronously (a log line must not be lost on exit). */
export function writeStdout(text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
}

export interface LogOptions {
  level: LevelName;
  json: boolean;
  /** Values masked as `***` wherever they would appear. */
  secrets?: readonly string[];
  /** Where finished lines go (with trailing newline); stdout by default. */
  write?: (line: string) => void;
}

/** Configures LogTape for the whole process (replacing any earlier configuration). */
export function setupLogging(options: LogOptions): void {
  const format = options.json ? formatJson : formatText;
  const secrets = options.secrets ?? [];
  let redact = createRedactor([...secrets, ...learnt]);
  let redactsVersion = learntVersion;
  const write = options.write ?? writeStdout;
  const sink = (record: LogRecord) => {
    if (redactsVersion !== learntVersion) {
      redact = createRedactor([...secrets, ...learnt]);
      redactsVersion = learntVersion;
    }
    write(redact(format(record)) + "\n");
  };
  configureSync({
    reset: true,
    sinks: { out: sink },
    loggers: [
      { category: [ROOT_CATEGORY], sinks: ["out"], lowestLevel: TO_LOGTAPE[options.level] },
      { category: ["logtape", "meta"], sinks: ["out"], lowestLevel: "warning" },
    ],
  });
}
