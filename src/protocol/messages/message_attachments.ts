/**
 * Messages `image` and `document` blocks (zod) and what each becomes in the neutral transcript:
 * an attachment (base64 or URL source), text (a plain-text document), or a placeholder (a
 * source the gateway cannot read, such as a Files API id).
 */
import { z } from "zod";
import type { BlockPart } from "../entry_parts.ts";
import {
  documentPlaceholder,
  IMAGE_MEDIA_TYPES,
  isBase64,
  PDF,
  UNREADABLE_IMAGE,
} from "../../base/attachment.ts";
import { imageTypeOfUrl } from "../attachment_urls.ts";
import { listOrString, tolerantUnion } from "../tolerant_schema.ts";

const base64Data = z.string().refine(isBase64, { error: "expected base64 data" });
const httpUrl = z.string().refine((url) => /^https?:\/\//i.test(url), {
  error: "expected an http(s) URL",
});

const ImageBase64 = z.object({
  type: z.literal("base64"),
  media_type: z.string().transform((type) => type.toLowerCase()).pipe(
    z.enum(IMAGE_MEDIA_TYPES as [string, ...string[]], {
      error: `expected one of ${IMAGE_MEDIA_TYPES.join(", ")}`,
    }),
  ),
  data: base64Data,
});
const UrlSource = z.object({ type: z.literal("url"), url: httpUrl });
const PdfBase64 = z.object({
  type: z.literal("base64"),
  media_type: z.literal(PDF, { error: `expected ${PDF}` }).optional(),
  data: base64Data,
});
const TextSource = z.object({ type: z.literal("text"), data: z.string() });
const TextBlock = z.object({ type: z.literal("text"), text: z.string() });

export const Image = z.object({
  type: z.literal("image"),
  source: tolerantUnion([ImageBase64, UrlSource], "an image source"),
});

/** The image blocks a `content` document source may hold, beside text. */
const ContentSource = z.object({
  type: z.literal("content"),
  content: listOrString(
    tolerantUnion([TextBlock, Image], "a content block"),
    (text) => ({ type: "text", text }),
    "content blocks",
  ),
});

export const Document = z.object({
  type: z.literal("document"),
  title: z.string().nullish(),
  source: tolerantUnion([PdfBase64, UrlSource, TextSource, ContentSource], "a document source"),
});

type ImageBlock = z.infer<typeof Image>;
type DocumentBlock = z.infer<typeof Document>;

export function imageParts(block: ImageBlock): BlockPart[] {
  const { source } = block;
  switch (source.type) {
    case "base64":
      return [{
        attachment: {
          kind: "image",
          mediaType: source.media_type,
          source: { type: "base64", data: source.data },
        },
      }];
    case "url":
      return [{
        attachment: {
          kind: "image",
          mediaType: imageTypeOfUrl(source.url),
          source: { type: "url", url: source.url },
        },
      }];
    default:
      // A Files API id or a source type we do not know: nothing a child could be given.
      return [{ text: UNREADABLE_IMAGE }];
  }
}

export function documentParts(block: DocumentBlock): BlockPart[] {
  const named = block.title ? { name: block.title } : {};
  const { source } = block;
  switch (source.type) {
    case "base64":
    case "url": {
      const from = source.type === "base64"
        ? { type: "base64" as const, data: source.data }
        : { type: "url" as const, url: source.url };
      return [{ attachment: { kind: "document", mediaType: PDF, source: from, ...named } }];
    }
    case "text":
      return [{ text: `${documentPlaceholder(block.title)}\n${source.data}` }];
    case "content":
      return source.content.flatMap((inner): BlockPart[] => {
        if (inner.type === "text") return [{ text: inner.text }];
        return inner.type === "image" ? imageParts(inner) : [];
      });
    default:
      return [{ text: documentPlaceholder(block.title) }];
  }
}
