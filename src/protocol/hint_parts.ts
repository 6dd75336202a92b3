/**
 * Pieces shared by both protocols' host hints: header values safe to log and keep, and the
 * fields of a JSON schema the host demands for its reply.
 */

/** A label value (request class, thread source) fit for a log line: short, no odd characters. */
export function labelValue(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed && /^[A-Za-z0-9_.:\/-]{1,64}$/.test(trimmed) ? trimmed : undefined;
}

/** A host's conversation id: ids are UUID-like; anything else is ignored. */
export function sessionIdValue(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return /^[A-Za-z0-9_.:-]{1,200}$/.test(trimmed) ? trimmed : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A JSON object parsed from a string (a header or a metadata field), or undefined. */
export function jsonObject(text: string | null | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The top-level property names of a `{type: "json_schema", schema}` reply format (both
 * protocols' structured-output shape), or undefined when the format is not one.
 */
export function jsonSchemaFields(format: unknown): string[] | undefined {
  if (!isRecord(format) || format.type !== "json_schema") return undefined;
  const schema = isRecord(format.schema)
    ? format.schema
    : isRecord(format.json_schema) && isRecord(format.json_schema.schema)
    ? format.json_schema.schema
    : undefined;
  const properties = schema && isRecord(schema.properties) ? schema.properties : {};
  return Object.keys(properties).map((name) => name.slice(0, 64));
}
