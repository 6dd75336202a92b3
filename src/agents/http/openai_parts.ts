/**
 * A prompt and the turn's attachments as OpenAI-compatible chat content parts: images as
 * `image_url` parts (a data URL or the image's URL), PDFs as `file` parts where the server takes
 * them, and a note in the text for what cannot be sent.
 */
import { attachmentFileName, dataUrl, type LabelledAttachment } from "../../base/attachment.ts";
import { unseenNote, withNotes } from "../attachment_notes.ts";

export type ContentPart = Record<string, unknown>;

function attachmentPart(
  attachment: LabelledAttachment,
  takesFiles: boolean,
): ContentPart | undefined {
  const url = dataUrl(attachment);
  if (attachment.kind === "image") {
    const source = url ?? (attachment.source.type === "url" ? attachment.source.url : "");
    return { type: "image_url", image_url: { url: source } };
  }
  // `file` parts (base64 PDFs) are OpenAI's own; other servers refuse unknown part types.
  if (!takesFiles || !url) return undefined;
  return {
    type: "file",
    file: { filename: attachment.name ?? attachmentFileName(attachment), file_data: url },
  };
}

/** The label, the part, for each attachment that can be sent; and those that cannot. */
export function attachmentParts(
  attachments: readonly LabelledAttachment[],
  takesFiles: boolean,
): { parts: ContentPart[]; unsent: LabelledAttachment[] } {
  const parts: ContentPart[] = [];
  const unsent: LabelledAttachment[] = [];
  for (const attachment of attachments) {
    const part = attachmentPart(attachment, takesFiles);
    if (!part) {
      unsent.push(attachment);
      continue;
    }
    parts.push({ type: "text", text: `${attachment.label}:` }, part);
  }
  return { parts, unsent };
}

/** The label, the part, for each attachment that can be sent; then the prompt and a note. */
export function openaiParts(
  prompt: string,
  attachments: readonly LabelledAttachment[],
  takesFiles: boolean,
): ContentPart[] {
  const { parts, unsent } = attachmentParts(attachments, takesFiles);
  return [...parts, { type: "text", text: withNotes(prompt, unseenNote(unsent)) }];
}
