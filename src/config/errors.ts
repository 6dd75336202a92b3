/**
 * Configuration problems in words: one line naming the key path (and the variable or flag that
 * set it), the bad value and what is allowed.
 */
import type { z } from "zod";
import {
  AGENT_FIELD_NAMES,
  ConfigSchema,
  HealthSchema,
  HTTP_RUNNERS,
  isHttpRunner,
  type IssueReason,
  PriceSchema,
  QuorumSchema,
  type Runner,
  RUNNERS,
} from "./schema.ts";

/** A configuration problem: a clear one-line message, exit code 2 at the CLI. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The `SVC_*` variable (or flag) that set each top-level key (so errors can name it). */
export type EnvSources = Record<string, string>;

/** Allowed keys of the mapping at an issue path, for "unknown key" messages. */
function allowedKeysAt(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(ConfigSchema.shape);
  if (path[0] === "defaultAgents" || path[0] === "judge") return AGENT_FIELD_NAMES;
  if (path[0] === "pricing") return Object.keys(PriceSchema.shape);
  if (path[0] === "quorum") return Object.keys(QuorumSchema.shape);
  if (path[0] === "health") return Object.keys(HealthSchema.shape);
  return [];
}

const TYPE_NAMES: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
};

/** What a runner needs that it may not leave out, with an example where one helps. */
const REQUIRED_EXAMPLES: Record<string, string> = {
  baseUrl: " (e.g. http://localhost:11434/v1)",
};

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) =>
      typeof key === "number" ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key),
    "",
  );
}

/** The value at `path` in `input` (undefined where the path leads nowhere). */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>(
    (v, k) =>
      v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined,
    input,
  );
}

function showValue(path: readonly PropertyKey[], value: unknown): string {
  if (path[0] === "token") return "(hidden)";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** An agent entry's problem that zod has no code for (see `IssueReason`), in words. */
function describeReason(
  reason: IssueReason,
  issue: z.core.$ZodIssue,
  input: unknown,
): string {
  const field = String(issue.path.at(-1));
  const runner = valueAt(input, [...issue.path.slice(0, -1), "runner"]) as Runner;
  const header = (issue as { params?: { header?: string } }).params?.header ?? "";
  switch (reason) {
    case "unused":
      return isHttpRunner(runner)
        ? `not used by runner "${runner}" (an HTTP runner calls its baseUrl); remove it`
        : `only for the HTTP runners (${HTTP_RUNNERS.join(", ")}), not runner "${runner}"`;
    case "required":
      return `is required when runner is "${runner}"${REQUIRED_EXAMPLES[field] ?? ""}`;
    case "header name":
      return `${JSON.stringify(header)} is not a valid header name`;
    case "header value":
      return `the value of ${header} has a character a header cannot carry ` +
        "(a line break, NUL, or one beyond Latin-1)";
  }
}

/** The line for a value of the wrong size. */
function describeSize(
  issue: z.core.$ZodIssue & { code: "too_small" | "too_big" },
  path: string,
  shown: string,
): string {
  if (issue.code === "too_big") {
    const max = Number(issue.maximum);
    return `${path}: ${shown} is too big: must be ${
      issue.inclusive ? "at most" : "less than"
    } ${max}`;
  }
  const min = Number(issue.minimum);
  if (issue.origin === "array") {
    return `${path}: must list at least ${min} entr${min === 1 ? "y" : "ies"}`;
  }
  if (issue.origin === "string") return `${path}: must not be empty`;
  return `${path}: ${shown} is too small: must be ${
    issue.inclusive ? "at least" : "more than"
  } ${min}`;
}

/**
 * Turns a zod issue into one line naming the key path, the bad value and what is allowed,
 * e.g. `defaultAgents[1].runner: "cladue" is not one of claude, codex, gemini, opencode, …`.
 */
export function describeIssue(
  issue: z.core.$ZodIssue,
  input: unknown,
  sources: EnvSources = {},
): string {
  const envName = typeof issue.path[0] === "string" ? sources[issue.path[0]] : undefined;
  const label = (path: readonly PropertyKey[]) => {
    const text = formatPath(path) || "(top level)";
    return envName ? `${text} (from ${envName})` : text;
  };
  const path = label(issue.path);
  const value = valueAt(input, issue.path);
  const shown = showValue(issue.path, value);
  const reason = (issue as { params?: { reason?: IssueReason } }).params?.reason;
  if (issue.code === "custom" && reason) {
    return `${path}: ${describeReason(reason, issue, input)}`;
  }
  switch (issue.code) {
    case "invalid_value":
      return `${path}: ${shown} is not one of ${issue.values.map(String).join(", ")}`;
    case "invalid_union":
      // An agent entry whose runner matches no kind of runner.
      if (value === undefined) return `${path}: is required (one of ${RUNNERS.join(", ")})`;
      return `${path}: ${shown} is not one of ${RUNNERS.join(", ")}`;
    case "unrecognized_keys": {
      const allowed = allowedKeysAt(issue.path);
      const key = issue.keys[0];
      const suggestion = allowed.find((k) => k.toLowerCase() === key.toLowerCase());
      const keyPath = label([...issue.path, key]);
      return `${keyPath}: unknown key${suggestion ? ` (did you mean ${suggestion}?)` : ""}; ` +
        `allowed: ${allowed.join(", ")}`;
    }
    case "invalid_type": {
      const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
      if (value === undefined) return `${path}: is required (${expected})`;
      return `${path}: ${shown} is not ${expected}`;
    }
    case "too_small":
    case "too_big":
      return describeSize(issue, path, shown);
    default:
      return `${path}: ${shown} is invalid: ${issue.message}`;
  }
}
