/**
 * A turn's images and documents in transcript order, labelled as its prompts refer to them
 * ("image #1"), and the transcript with a marker for each where it was sent.
 */
import {
  type Attachment,
  describeAttachment,
  labelAttachments,
  type LabelledAttachment,
} from "../../base/attachment.ts";
import type { TranscriptEntry } from "../types.ts";

function attachmentsOf(entry: TranscriptEntry): Attachment[] {
  return entry.kind === "user" || entry.kind === "tool_result" ? entry.attachments ?? [] : [];
}

/** Every attachment of the transcript, labelled; children are given exactly these. */
export function turnAttachments(transcript: readonly TranscriptEntry[]): LabelledAttachment[] {
  return labelAttachments(transcript.flatMap(attachmentsOf));
}

/** `[image #1: image/png]`: what stands in the prompt where the attachment was. */
function attachmentMarker(attachment: LabelledAttachment): string {
  return `[${attachment.label}: ${describeAttachment(attachment)}]`;
}

/** The transcript with each entry's attachments as markers after its text. */
export function withAttachmentMarkers(transcript: readonly TranscriptEntry[]): TranscriptEntry[] {
  const labelled = turnAttachments(transcript);
  let next = 0;
  return transcript.map((entry) => {
    const count = attachmentsOf(entry).length;
    if (count === 0 || (entry.kind !== "user" && entry.kind !== "tool_result")) return entry;
    const markers = labelled.slice(next, next += count).map(attachmentMarker);
    const text = [entry.text, ...markers].filter((t) => t !== "").join("\n");
    return { ...entry, text };
  });
}
