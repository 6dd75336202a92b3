/**
 * The attachment policy applied to a turn's input before the council sees it: URL sources
 * fetched when the setting allows, and the count and size limits, whose refusals are clear
 * 4xx errors the protocol words in its own envelope.
 */
import {
  type Attachment,
  attachmentBytes,
  describeAttachment,
  labelAttachments,
} from "../base/attachment.ts";
import type { TranscriptEntry, TurnInput } from "../council/types.ts";
import { AttachmentFetchError, fetchAttachment } from "./attachment_urls.ts";

export interface AttachmentPolicy {
  /** Decoded bytes one image may have (config `maxImageBytes`). */
  maxImageBytes: number;
  /** Decoded bytes all images and documents of one request may have together. */
  maxAttachmentBytes: number;
  /** Images and documents one request may carry. */
  maxAttachments: number;
  /** Fetch URL sources into bytes (config `fetchAttachmentUrls`); otherwise passed on as URLs. */
  fetchUrls: boolean;
  /** How long one URL may take to fetch. */
  fetchTimeoutMs?: number;
  fetch?: typeof fetch;
}

const DEFAULT_FETCH_TIMEOUT_MS = 30_000;

/** The configuration's defaults (config/schema.ts), for callers without a config. */
export const DEFAULT_ATTACHMENT_POLICY: Readonly<AttachmentPolicy> = {
  maxImageBytes: 5 * 1024 * 1024,
  maxAttachmentBytes: 20 * 1024 * 1024,
  maxAttachments: 100,
  fetchUrls: false,
};

/** Why a request's attachments are refused: 413 for sizes, 400 otherwise. */
interface AttachmentRefusal {
  status: 400 | 413;
  message: string;
}

export function isRefusal(value: TurnInput | AttachmentRefusal): value is AttachmentRefusal {
  return "status" in value;
}

function attachmentsOf(transcript: readonly TranscriptEntry[]): Attachment[] {
  return transcript.flatMap((entry) =>
    entry.kind === "user" || entry.kind === "tool_result" ? entry.attachments ?? [] : []
  );
}

const tooLarge = (message: string): AttachmentRefusal => ({ status: 413, message });
const invalid = (message: string): AttachmentRefusal => ({ status: 400, message });

const LIGHTEN = "start a new conversation or compact this one";

/** The count and size limits over the attachments as they are now (URLs count no bytes). */
function checkLimits(
  attachments: readonly Attachment[],
  policy: AttachmentPolicy,
): AttachmentRefusal | undefined {
  if (attachments.length > policy.maxAttachments) {
    return invalid(
      `the request carries ${attachments.length} images and documents; this gateway takes at ` +
        `most ${policy.maxAttachments} per request (maxAttachments): ${LIGHTEN}`,
    );
  }
  let total = 0;
  for (const attachment of labelAttachments(attachments)) {
    const bytes = attachmentBytes(attachment);
    total += bytes;
    if (attachment.kind === "image" && bytes > policy.maxImageBytes) {
      return tooLarge(
        `${attachment.label} (${describeAttachment(attachment)}) is ${bytes} bytes; this ` +
          `gateway takes images of at most ${policy.maxImageBytes} bytes (maxImageBytes)`,
      );
    }
  }
  if (total > policy.maxAttachmentBytes) {
    return tooLarge(
      `the request's images and documents come to ${total} bytes; this gateway takes at most ` +
        `${policy.maxAttachmentBytes} bytes of them per request (maxAttachmentBytes): ${LIGHTEN}`,
    );
  }
  return undefined;
}

/** Fetches every URL source; the first failure is the refusal. */
async function fetchAll(
  attachments: readonly Attachment[],
  policy: AttachmentPolicy,
  signal: AbortSignal,
): Promise<Map<Attachment, Attachment> | AttachmentRefusal> {
  const fetched = new Map<Attachment, Attachment>();
  const labelled = labelAttachments(attachments);
  for (const [i, attachment] of attachments.entries()) {
    if (attachment.source.type !== "url") continue;
    const maxBytes = attachment.kind === "image" ? policy.maxImageBytes : policy.maxAttachmentBytes;
    const timeout = AbortSignal.timeout(policy.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS);
    try {
      fetched.set(
        attachment,
        await fetchAttachment(attachment, {
          maxBytes,
          signal: AbortSignal.any([signal, timeout]),
          fetch: policy.fetch,
        }),
      );
    } catch (error) {
      if (signal.aborted) throw error;
      const label = labelled[i].label;
      if (error instanceof AttachmentFetchError) {
        return error.tooLarge
          ? tooLarge(`${label}: ${error.message} (maxImageBytes, maxAttachmentBytes)`)
          : invalid(`${label}: ${error.message}`);
      }
      return invalid(`${label}: cannot fetch ${attachment.source.url}: ${String(error)}`);
    }
  }
  return fetched;
}

function replaced(
  transcript: readonly TranscriptEntry[],
  fetched: ReadonlyMap<Attachment, Attachment>,
): TranscriptEntry[] {
  return transcript.map((entry) =>
    (entry.kind === "user" || entry.kind === "tool_result") && entry.attachments
      ? { ...entry, attachments: entry.attachments.map((a) => fetched.get(a) ?? a) }
      : entry
  );
}

/**
 * The input with URL sources fetched (when allowed), or why its attachments are refused.
 * Throws only when `signal` aborts.
 */
export async function applyAttachmentPolicy(
  input: TurnInput,
  policy: AttachmentPolicy,
  signal: AbortSignal,
): Promise<TurnInput | AttachmentRefusal> {
  const attachments = attachmentsOf(input.transcript);
  if (attachments.length === 0) return input;
  // Limits first: nothing is fetched for a request that is refused anyway.
  const refusal = checkLimits(attachments, policy);
  if (refusal) return refusal;
  if (!policy.fetchUrls || attachments.every((a) => a.source.type !== "url")) return input;
  const fetched = await fetchAll(attachments, policy, signal);
  if (fetched instanceof Map) {
    const transcript = replaced(input.transcript, fetched);
    return checkLimits(attachmentsOf(transcript), policy) ?? { ...input, transcript };
  }
  return fetched;
}
