/**
 * What Codex says about a Responses request besides its prompt: its turn metadata header
 * (thread source, request kind, session id), its session header, a structured-output demand,
 * and how many tools it declared (in `tools` or in `additional_tools` input items).
 */
import type { HostHints } from "../../council/types.ts";
import {
  isRecord,
  jsonObject,
  jsonSchemaFields,
  labelValue,
  sessionIdValue,
} from "../hint_parts.ts";

const TURN_METADATA_HEADER = "x-codex-turn-metadata";
const SESSION_HEADER = "session-id";

/** Threads Codex starts for itself: titles, memory consolidation, internal reviewers. */
const HOUSEKEEPING_SOURCE = /title|summar|compact|memory|internal/i;

function requestClass(metadata: Record<string, unknown>): HostHints["requestClass"] {
  const kind = labelValue(typeof metadata.request_kind === "string" ? metadata.request_kind : "");
  const source = labelValue(
    typeof metadata.thread_source === "string" ? metadata.thread_source : "",
  );
  if (kind && kind !== "turn") {
    const label = `${TURN_METADATA_HEADER} request_kind: ${kind}`;
    return /compact/i.test(kind)
      ? { housekeeping: true, label, compaction: true }
      : { housekeeping: true, label };
  }
  if (source) {
    return {
      housekeeping: HOUSEKEEPING_SOURCE.test(source),
      label: `${TURN_METADATA_HEADER} thread_source: ${source}`,
    };
  }
  return undefined;
}

function declaredTools(body: Record<string, unknown>): number {
  let count = Array.isArray(body.tools) ? body.tools.length : 0;
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (isRecord(item) && item.type === "additional_tools" && Array.isArray(item.tools)) {
      count += item.tools.length;
    }
  }
  return count;
}

/** The hints of one Responses request (headers and the raw JSON body). */
export function responsesHints(headers: Headers, body: unknown): HostHints {
  const record = isRecord(body) ? body : {};
  const metadata = jsonObject(headers.get(TURN_METADATA_HEADER)) ?? {};
  const hints: HostHints = { declaredTools: declaredTools(record) };
  const sessionId = sessionIdValue(headers.get(SESSION_HEADER)) ??
    sessionIdValue(metadata.session_id);
  if (sessionId) hints.sessionId = sessionId;
  const labelled = requestClass(metadata);
  if (labelled) hints.requestClass = labelled;
  const text = isRecord(record.text) ? record.text : {};
  const fields = jsonSchemaFields(text.format);
  if (fields) hints.jsonReplyFields = fields;
  return hints;
}
