/**
 * The token estimate of one image or document (README "Images and documents"): an image by its
 * pixel area, as Anthropic bills it; a PDF by its page count; never by its base64 length.
 */
import { Buffer } from "node:buffer";
import { type Attachment, PDF } from "../base/attachment.ts";
import { imageDimensions } from "../base/image_header.ts";

/** Anthropic scales larger images down to this long edge before the model sees them. */
const MAX_IMAGE_EDGE = 1568;
/** Pixels per token of Anthropic's rule (tokens = width × height / 750). */
const PIXELS_PER_TOKEN = 750;
/** The most one image counts, and what an image of unknown size counts. */
export const MAX_IMAGE_TOKENS = 1600;
/** What one PDF page counts (its text plus the page as an image). */
export const PAGE_TOKENS = 2000;
/** When no page object can be found (compressed object streams): one page per this many bytes. */
const BYTES_PER_GUESSED_PAGE = 50_000;

/** Tokens of an image `width` × `height` pixels. */
export function imageTokens(width: number, height: number): number {
  const scale = Math.min(1, MAX_IMAGE_EDGE / Math.max(width, height));
  const pixels = Math.round(width * scale) * Math.round(height * scale);
  return Math.min(MAX_IMAGE_TOKENS, Math.max(1, Math.ceil(pixels / PIXELS_PER_TOKEN)));
}

/** Pages of a PDF: its `/Type /Page` objects, else a guess from its size (at least 1). */
function pdfPages(bytes: Uint8Array): number {
  const text = new TextDecoder("latin1").decode(bytes);
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  return pages > 0 ? pages : Math.max(1, Math.ceil(bytes.length / BYTES_PER_GUESSED_PAGE));
}

/** Base64 characters of an image's head searched for its size (JPEG metadata comes first). */
const IMAGE_HEAD_CHARS = 4 * 64 * 1024;

function decode(data: string): Uint8Array {
  return Buffer.from(data, "base64");
}

/** Estimated input tokens of one attachment. */
export function attachmentTokens(attachment: Attachment): number {
  const { source } = attachment;
  if (attachment.kind === "image") {
    const head = source.type === "base64"
      ? decode(source.data.slice(0, IMAGE_HEAD_CHARS))
      : undefined;
    const size = head && imageDimensions(head);
    return size ? imageTokens(size.width, size.height) : MAX_IMAGE_TOKENS;
  }
  if (source.type === "base64" && attachment.mediaType === PDF) {
    return pdfPages(decode(source.data)) * PAGE_TOKENS;
  }
  return PAGE_TOKENS;
}
