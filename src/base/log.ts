/**
 * Logging setup: one record per line on stdout, human-readable text with a `[turn <id>]` prefix
 * or JSON lines, with every known secret masked and every control character shown as an escape
 * before a line is written.
 */
import { configureSync, getLogger, type LogLevel, type LogRecord } from "@logtape/logtape";
import type { Logger } from "@logtape/logtape";
import { CREDENTIAL_VARIABLES, GATEWAY_TOKEN_VARIABLES } from "./secret_variables.ts";
import { MIN_SECRET_LENGTH, secrets as registry } from "./redact.ts";

export type { Logger };
export { createRedactor } from "./redact.ts";

/** The levels of CONTRACT.md §1.2. */
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
const ROOT_CATEGORY = "council-gateway";

/** A module's logger. */
export function moduleLogger(module: string): Logger {
  return getLogger([ROOT_CATEGORY, module]);
}

/** Environment variables whose values are secrets: the agents' credential list plus ours. */
const SECRET_ENV_VARS: readonly string[] = [
  "SVC_GATEWAY_TOKEN",
  ...GATEWAY_TOKEN_VARIABLES,
  ...CREDENTIAL_VARIABLES,
];

/**
 * Collects the secrets to mask: the gateway token plus provider keys from the environment, those
 * of `keyVariables` (the agents' own `apiKeyEnv`) included.
 */
export function collectSecrets(
  token: string | undefined,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
  keyVariables: readonly string[] = [],
): string[] {
  const values = [token, ...[...SECRET_ENV_VARS, ...keyVariables].map((name) => env(name))];
  return [...new Set(values.filter((v): v is string => !!v && v.length >= MIN_SECRET_LENGTH))];
}

/**
 * Masks `secret` in every line from now on while there is room among recently learnt secrets
 * (see SecretRegistry): for a provider key a request presents for its children (passApiKeys).
 * A running turn holds its request's keys, so a key in use is never forgotten.
 */
export function maskSecret(secret: string): void {
  registry.learn(secret);
}

/**
 * Characters a terminal may act on (C0 and C1 controls, DEL) or that reorder or break what is
 * shown (line separators, bidirectional overrides). An escape sequence in a request path or a
 * model name must be shown, never emitted: it could write the clipboard or the window title.
 */
// deno-lint-ignore no-control-regex
const UNSAFE_CHARACTERS = /[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function hex(char: string, digits: number): string {
  return char.charCodeAt(0).toString(16).padStart(digits, "0");
}

/** Text with every unsafe character shown as an escape (`\n`, `\x1b`, `\u202e`). */
function escapeControls(text: string): string {
  return text.replace(
    UNSAFE_CHARACTERS,
    (char) =>
      NAMED_ESCAPES[char] ?? (char < "\u0100" ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`),
  );
}

/** JSON text with the unsafe characters JSON.stringify leaves raw written as `\uXXXX`. */
function escapeJsonControls(json: string): string {
  return json.replace(UNSAFE_CHARACTERS, (char) => `\\u${hex(char, 4)}`);
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
function renderMessage(record: LogRecord): string {
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
function formatText(record: LogRecord): string {
  const level = FROM_LOGTAPE[record.level].toUpperCase().padEnd(5);
  const turn = record.properties.turn;
  const prefix = turn === undefined ? "" : `[turn ${renderValue(turn)}] `;
  const fields = extraFields(record).map(([k, v]) => ` ${k}=${fieldText(v)}`).join("");
  const line = `${new Date(record.timestamp).toISOString()} ${level} ${prefix}${
    renderMessage(record)
  }${fields}`;
  // One record per line, and nothing a terminal would act on, whatever the message carries.
  return escapeControls(line);
}

function jsonSafe(value: unknown): unknown {
  if (value instanceof Error) return value.message;
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** JSON line: `{"ts","level","msg","turn"?,"module",...fields}` (every property as a field). */
function formatJson(record: LogRecord): string {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record.properties)) out[key] = jsonSafe(value);
  out.ts = new Date(record.timestamp).toISOString();
  out.level = FROM_LOGTAPE[record.level];
  out.msg = renderMessage(record);
  if (record.properties.turn !== undefined) out.turn = renderValue(record.properties.turn);
  out.module = record.category.slice(1).join(".") || record.category.join(".");
  let json: string;
  try {
    json = JSON.stringify(out);
  } catch {
    json = JSON.stringify({ ts: out.ts, level: out.level, msg: out.msg, module: out.module });
  }
  return escapeJsonControls(json);
}

const encoder = new TextEncoder();

/** Writes the whole text to stdout synchronously (a log line must not be lost on exit). */
export function writeStdout(text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
}

interface LogOptions {
  level: LevelName;
  json: boolean;
  /**
   * Values masked as `***` wherever they would appear: added to the process's secret registry,
   * so progress lines, answers and error replies mask them too.
   */
  secrets?: readonly string[];
  /** Where finished lines go (with trailing newline); stdout by default. */
  write?: (line: string) => void;
}

/** Configures LogTape for the whole process (replacing any earlier configuration). */
export function setupLogging(options: LogOptions): void {
  const format = options.json ? formatJson : formatText;
  for (const secret of options.secrets ?? []) registry.add(secret);
  const write = options.write ?? writeStdout;
  const sink = (record: LogRecord) => write(registry.redact(format(record)) + "\n");
  configureSync({
    reset: true,
    sinks: { out: sink },
    loggers: [
      { category: [ROOT_CATEGORY], sinks: ["out"], lowestLevel: TO_LOGTAPE[options.level] },
      { category: ["logtape", "meta"], sinks: ["out"], lowestLevel: "warning" },
    ],
  });
}
