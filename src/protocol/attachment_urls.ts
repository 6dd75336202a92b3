/**
 * URL sources of images and documents: the media type a URL's file name suggests, and fetching
 * one into base64 bytes without reading past a size limit.
 */
import { Buffer } from "node:buffer";
import { type Attachment, IMAGE_MEDIA_TYPES, PDF } from "../base/attachment.ts";
import { sniffMediaType } from "../base/image_header.ts";

const BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** The image type a URL's file extension names, or "" when it names none. */
export function imageTypeOfUrl(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return "";
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? "";
  return BY_EXTENSION[extension] ?? "";
}

/** A URL source that could not be made into bytes; `tooLarge` means the limit stopped it. */
export class AttachmentFetchError extends Error {
  override name = "AttachmentFetchError";
  constructor(message: string, readonly tooLarge = false) {
    super(message);
  }
}

interface FetchLimits {
  /** Reading stops (and the fetch fails) beyond this many bytes. */
  maxBytes: number;
  signal: AbortSignal;
  fetch?: typeof fetch;
}

async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number, url: string) {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      await body.cancel().catch(() => {});
      throw new AttachmentFetchError(`${url} is larger than ${maxBytes} bytes`, true);
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

function acceptedType(kind: Attachment["kind"], type: string | undefined): boolean {
  return type !== undefined && (kind === "image" ? IMAGE_MEDIA_TYPES.includes(type) : type === PDF);
}

/** Fetches a URL attachment's bytes; a base64 one is returned as it is. Throws AttachmentFetchError. */
export async function fetchAttachment(
  attachment: Attachment,
  limits: FetchLimits,
): Promise<Attachment> {
  if (attachment.source.type !== "url") return attachment;
  const url = attachment.source.url;
  let response: Response;
  try {
    response = await (limits.fetch ?? fetch)(url, { signal: limits.signal });
  } catch (error) {
    if (limits.signal.aborted) throw error;
    throw new AttachmentFetchError(`cannot fetch ${url}: ${(error as Error).message}`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => {});
    throw new AttachmentFetchError(`cannot fetch ${url}: HTTP ${response.status}`);
  }
  const declared = response.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  const bytes = await readCapped(response.body, limits.maxBytes, url);
  // A server's generic type (octet-stream, text/plain) loses to what the bytes say.
  const mediaType = acceptedType(attachment.kind, declared) ? declared! : sniffMediaType(bytes);
  if (!acceptedType(attachment.kind, mediaType)) {
    const wanted = attachment.kind === "image" ? IMAGE_MEDIA_TYPES.join(", ") : PDF;
    throw new AttachmentFetchError(`${url} is not ${wanted} (${declared ?? "no content-type"})`);
  }
  return {
    ...attachment,
    mediaType: mediaType!,
    source: { type: "base64", data: bytes.toString("base64") },
  };
}
