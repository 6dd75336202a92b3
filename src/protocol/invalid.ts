/**
 * Turns a zod failure into one clear line naming the bad field, for the protocols' 400 replies.
 */
import type { z } from "zod";

interface InvalidField {
  /** Dotted path of the offending field (`messages.2.content.0.text`), or "" for the body. */
  param: string;
  /** A readable sentence naming the field. */
  message: string;
  /** The field is absent (as opposed to present with a bad value). */
  missing: boolean;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Describes the first issue of a failed parse of `body`. */
export function describeInvalid(error: z.ZodError, body: unknown): InvalidField {
  const issue = error.issues[0];
  const path = issue?.path ?? [];
  const param = path.map(String).join(".");
  const missing = path.length > 0 && valueAt(body, path) === undefined;
  const what = missing ? "is required" : issue?.message ?? "is invalid";
  const message = param
    ? (missing ? `${param}: field ${what}` : `${param}: ${what}`)
    : `request body: ${what}`;
  return { param, message, missing };
}
