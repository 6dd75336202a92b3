/**
 * What Claude Code says about a Messages request besides its prompt: its request-class hint
 * header, its session id (header, or `metadata.user_id`), and a structured-output demand.
 */
import type { HostHints } from "../../council/types.ts";
import {
  isRecord,
  jsonObject,
  jsonSchemaFields,
  labelValue,
  sessionIdValue,
} from "../hint_parts.ts";

const REQUEST_CLASS_HEADER = "x-claude-code-request-class";
const SESSION_HEADER = "x-claude-code-session-id";
/** Claude Code 2.1.332+ names a compaction's trigger here (`manual` for /compact, `auto`). */
const COMPACTION_HEADER = "x-claude-code-compaction";

/**
 * Request classes that are the user's own work. Claude Code also sends `compaction`,
 * `auxiliary` (titles and other helpers) and `side_reply`; all of those are housekeeping.
 */
const WORK_CLASSES = new Set(["main", "subagent", "workflow"]);

function sessionFromMetadata(body: Record<string, unknown>): string | undefined {
  const metadata = body.metadata;
  if (!isRecord(metadata) || typeof metadata.user_id !== "string") return undefined;
  return sessionIdValue(jsonObject(metadata.user_id)?.session_id);
}

/** The hints of one Messages request (headers and the raw JSON body). */
export function messagesHints(headers: Headers, body: unknown): HostHints {
  const record = isRecord(body) ? body : {};
  const hints: HostHints = {};
  const sessionId = sessionIdValue(headers.get(SESSION_HEADER)) ?? sessionFromMetadata(record);
  if (sessionId) hints.sessionId = sessionId;
  const requestClass = labelValue(headers.get(REQUEST_CLASS_HEADER));
  const trigger = labelValue(headers.get(COMPACTION_HEADER));
  if (requestClass) {
    const compaction = requestClass.toLowerCase() === "compaction";
    hints.requestClass = {
      housekeeping: !WORK_CLASSES.has(requestClass.toLowerCase()),
      label: `${REQUEST_CLASS_HEADER}: ${requestClass}${
        compaction && trigger ? ` (${trigger})` : ""
      }`,
      ...(compaction ? { compaction } : {}),
    };
  } else if (trigger) {
    hints.requestClass = {
      housekeeping: true,
      label: `${COMPACTION_HEADER}: ${trigger}`,
      compaction: true,
    };
  }
  const outputConfig = isRecord(record.output_config) ? record.output_config : {};
  const fields = jsonSchemaFields(outputConfig.format) ?? jsonSchemaFields(record.output_format);
  if (fields) hints.jsonReplyFields = fields;
  return hints;
}
