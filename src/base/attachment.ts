/**
 * The neutral attachment — an image or a document the user supplied, as base64 bytes or as a
 * URL — with the few facts every layer asks of one: its size, data URL, file name and label.
 */

type AttachmentKind = "image" | "document";

type AttachmentSource =
  | { type: "base64"; data: string }
  | { type: "url"; url: string };

export interface Attachment {
  kind: AttachmentKind;
  /** MIME type (`image/png`, `application/pdf`); "" for a URL source of unknown type. */
  mediaType: string;
  source: AttachmentSource;
  /** A document's title or file name, when the host gave one. */
  name?: string;
}

/** An attachment of a turn with the label its prompts refer to it by ("image #1"). */
export interface LabelledAttachment extends Attachment {
  label: string;
}

/** Image types both model APIs (Anthropic, OpenAI-compatible) take. */
export const IMAGE_MEDIA_TYPES: readonly string[] = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
];
export const PDF = "application/pdf";

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  [PDF]: "pdf",
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Whether `text` is standard base64 (whitespace, as in wrapped PEM-style text, is allowed). */
export function isBase64(text: string): boolean {
  const compact = text.replace(/\s+/g, "");
  return compact.length % 4 === 0 && BASE64.test(compact);
}

/** Bytes that base64 `text` decodes to, counted without decoding it. */
function decodedSize(text: string): number {
  const compact = text.replace(/\s+/g, "");
  const padding = compact.endsWith("==") ? 2 : compact.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(compact.length * 3 / 4) - padding);
}

/** Decoded bytes of an attachment, or 0 for a URL source. */
export function attachmentBytes(attachment: Attachment): number {
  return attachment.source.type === "base64" ? decodedSize(attachment.source.data) : 0;
}

/** `data:<type>;base64,<data>`, or undefined when the attachment is a URL. */
export function dataUrl(attachment: Attachment): string | undefined {
  const { source } = attachment;
  return source.type === "base64"
    ? `data:${attachment.mediaType};base64,${source.data.replace(/\s+/g, "")}`
    : undefined;
}

/** A parsed `data:` URL: its media type and base64 payload, or undefined if not base64. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]*)((?:;[^;,]*)*);base64,(.*)$/s.exec(url);
  if (!match) return undefined;
  return { mediaType: match[1].trim().toLowerCase(), data: match[3] };
}

/** The file name an attachment is written under: `image-1.png` for "image #1". */
export function attachmentFileName(attachment: LabelledAttachment): string {
  const stem = attachment.label.replace(/\s*#\s*/, "-").replace(/[^A-Za-z0-9-]/g, "");
  return `${stem}.${EXTENSIONS[attachment.mediaType] ?? "bin"}`;
}

/** What an attachment is, in a few words: "image/png", "report.pdf (application/pdf)", a URL. */
export function describeAttachment(attachment: Attachment): string {
  const type = attachment.mediaType || attachment.kind;
  const what = attachment.name ? `${attachment.name} (${type})` : type;
  return attachment.source.type === "url" ? `${what} at ${attachment.source.url}` : what;
}

/** Where an image the gateway cannot read was (a Files API id, an unknown source type). */
export const UNREADABLE_IMAGE = "[image: not readable by the gateway]";

export function documentPlaceholder(name?: string | null): string {
  return name ? `[document: ${name}]` : "[document]";
}

/** The text an attachment stands as where only text fits: `[image: image/png]`. */
export function placeholder(attachment: Attachment): string {
  if (attachment.kind === "document") return documentPlaceholder(attachment.name);
  return attachment.mediaType ? `[image: ${attachment.mediaType}]` : "[image]";
}

/** Labels attachments in order, counting images and documents apart: image #1, document #1, … */
export function labelAttachments(attachments: readonly Attachment[]): LabelledAttachment[] {
  const counts: Record<AttachmentKind, number> = { image: 0, document: 0 };
  return attachments.map((attachment) => ({
    ...attachment,
    label: `${attachment.kind} #${++counts[attachment.kind]}`,
  }));
}
