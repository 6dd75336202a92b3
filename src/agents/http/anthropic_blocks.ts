/**
 * A prompt and the turn's attachments as Anthropic content blocks — what the `anthropic`
 * runner's API and claude's stream-json input both take: each attachment after its label,
 * then the prompt.
 */
import { type LabelledAttachment, PDF } from "../../base/attachment.ts";

export type ContentBlock = Record<string, unknown>;

function attachmentBlock(attachment: LabelledAttachment): ContentBlock {
  const { source } = attachment;
  const from = source.type === "base64"
    ? {
      type: "base64",
      media_type: attachment.kind === "document" ? PDF : attachment.mediaType,
      data: source.data,
    }
    : { type: "url", url: source.url };
  return attachment.kind === "image"
    ? { type: "image", source: from }
    : { type: "document", source: from, ...(attachment.name ? { title: attachment.name } : {}) };
}

/** The label, the attachment, for each. */
export function attachmentBlocks(attachments: readonly LabelledAttachment[]): ContentBlock[] {
  return attachments.flatMap((a) => [{ type: "text", text: `${a.label}:` }, attachmentBlock(a)]);
}

/** The label, the attachment, for each; then the prompt text. */
export function anthropicBlocks(
  prompt: string,
  attachments: readonly LabelledAttachment[],
): ContentBlock[] {
  return [...attachmentBlocks(attachments), { type: "text", text: prompt }];
}
