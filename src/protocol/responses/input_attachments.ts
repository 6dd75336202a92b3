/**
 * Responses `input_image` and `input_file` parts (zod) and what each becomes in the neutral
 * transcript: an attachment from a data URL or an http(s) URL, text (a text file), or a
 * placeholder (a file id, a type no child can take).
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import {
  documentPlaceholder,
  IMAGE_MEDIA_TYPES,
  isBase64,
  parseDataUrl,
  PDF,
  UNREADABLE_IMAGE,
} from "../../base/attachment.ts";
import { sniffMediaType } from "../../base/image_header.ts";
import { imageTypeOfUrl } from "../attachment_urls.ts";
import type { BlockPart } from "../entry_parts.ts";

const isHttpUrl = (url: string) => /^https?:\/\//i.test(url);

const ImageUrl = z.string().superRefine((url, ctx) => {
  if (isHttpUrl(url)) return;
  const data = parseDataUrl(url);
  if (!data) {
    ctx.addIssue({ code: "custom", message: "expected a base64 data URL or an http(s) URL" });
  } else if (!IMAGE_MEDIA_TYPES.includes(data.mediaType)) {
    ctx.addIssue({
      code: "custom",
      message: `expected an image of type ${IMAGE_MEDIA_TYPES.join(", ")}, not ${data.mediaType}`,
    });
  } else if (!isBase64(data.data)) {
    ctx.addIssue({ code: "custom", message: "expected base64 data" });
  }
});

export const ImagePart = z.object({
  type: z.literal("input_image"),
  image_url: ImageUrl.nullish(),
  file_id: z.string().nullish(),
});

/** `file_data` is a data URL, or (as some clients send it) bare base64 named by `filename`. */
const FileData = z.string().refine((data) => {
  const parsed = parseDataUrl(data);
  return parsed ? isBase64(parsed.data) : isBase64(data);
}, { error: "expected a base64 data URL or base64 data" });

export const FilePart = z.object({
  type: z.literal("input_file"),
  filename: z.string().nullish(),
  file_data: FileData.nullish(),
  file_url: z.string().refine(isHttpUrl, { error: "expected an http(s) URL" }).nullish(),
  file_id: z.string().nullish(),
});

export function imageParts(part: z.infer<typeof ImagePart>): BlockPart[] {
  const url = part.image_url;
  if (!url) return [{ text: UNREADABLE_IMAGE }];
  if (isHttpUrl(url)) {
    return [{
      attachment: { kind: "image", mediaType: imageTypeOfUrl(url), source: { type: "url", url } },
    }];
  }
  const data = parseDataUrl(url)!;
  return [{
    attachment: {
      kind: "image",
      mediaType: data.mediaType,
      source: { type: "base64", data: data.data },
    },
  }];
}

/** Text types a child reads best as text. */
const isTextType = (type: string) =>
  type.startsWith("text/") || ["application/json", "application/xml"].includes(type);

const TEXT_EXTENSIONS = /\.(txt|md|markdown|csv|tsv|json|xml|ya?ml|html?|log)$/i;

export function fileParts(part: z.infer<typeof FilePart>): BlockPart[] {
  const name = part.filename ?? undefined;
  const named = name ? { name } : {};
  if (part.file_url) {
    const source = { type: "url" as const, url: part.file_url };
    return [{ attachment: { kind: "document", mediaType: PDF, source, ...named } }];
  }
  if (!part.file_data) return [{ text: documentPlaceholder(name) }];
  const parsed = parseDataUrl(part.file_data) ?? { mediaType: "", data: part.file_data };
  const bytes = Buffer.from(parsed.data, "base64");
  const mediaType = parsed.mediaType || sniffMediaType(bytes) ||
    (name && TEXT_EXTENSIONS.test(name) ? "text/plain" : "");
  if (mediaType === PDF) {
    return [{
      attachment: {
        kind: "document",
        mediaType,
        source: { type: "base64", data: parsed.data },
        ...named,
      },
    }];
  }
  if (IMAGE_MEDIA_TYPES.includes(mediaType)) {
    return [{
      attachment: {
        kind: "image",
        mediaType,
        source: { type: "base64", data: parsed.data },
        ...named,
      },
    }];
  }
  if (isTextType(mediaType)) {
    return [{ text: `${documentPlaceholder(name)}\n${new TextDecoder().decode(bytes)}` }];
  }
  // Office files and the like: no child takes them; the user is told which file it was.
  return [{ text: `${documentPlaceholder(name)} (${mediaType || "unknown type"}: not readable)` }];
}
