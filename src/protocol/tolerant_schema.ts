/**
 * Zod building blocks for tolerant request bodies: unions that accept unknown `type`s, and
 * "a string or a list" fields, both still naming the bad field of a known shape precisely.
 */
import { z } from "zod";

/** Longest `model` accepted: real ids are short, and the name is echoed and logged. */
const MAX_MODEL_CHARS = 256;

/** The `model` field of both protocols. */
export const ModelName = z.string().min(1).max(MAX_MODEL_CHARS);

/** What an element of an unknown `type` becomes: kept, marked, and ignored downstream. */
const Other = z.object({ type: z.literal("other"), originalType: z.string() });

type Typed = z.ZodObject<{ type: z.ZodLiteral<string> | z.ZodEnum }>;

function typesOf(option: Typed): string[] {
  const type = option.shape.type;
  return type instanceof z.ZodLiteral ? [...type.values] as string[] : type.options as string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A discriminated union on `type` where an unknown `type` parses as `Other` instead of failing.
 * `normalize` may rewrite an element first (e.g. give a short form its `type`).
 */
export function tolerantUnion<const T extends readonly [Typed, ...Typed[]]>(
  options: T,
  noun: string,
  normalize: (value: Record<string, unknown>) => Record<string, unknown> = (value) => value,
) {
  const known = new Set(options.flatMap(typesOf));
  return z.preprocess(
    (value) => {
      if (!isRecord(value)) return value;
      const element = normalize(value);
      return typeof element.type === "string" && !known.has(element.type)
        ? { type: "other", originalType: element.type }
        : element;
    },
    z.discriminatedUnion("type", [...options, Other], {
      error: (issue) =>
        issue.code === "invalid_union" ? `expected ${noun} with a string \`type\`` : undefined,
    }),
  );
}

/** An array of `element`, where a bare string stands for `fromString(string)` alone. */
export function listOrString<T extends z.ZodType>(
  element: T,
  fromString: (text: string) => unknown,
  noun: string,
) {
  return z.preprocess(
    (value) => (typeof value === "string" ? [fromString(value)] : value),
    z.array(element, {
      error: (issue) =>
        issue.code === "invalid_type" ? `expected a string or an array of ${noun}` : undefined,
    }),
  );
}
