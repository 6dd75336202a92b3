/**
 * What the first bytes of an image or PDF file say: its media type (PNG, JPEG, GIF, WebP, PDF)
 * and, for images, its pixel dimensions.
 */
import { imageSize } from "image-size";

interface Dimensions {
  width: number;
  height: number;
}

const startsWith = (bytes: Uint8Array, text: string, at = 0) =>
  bytes.length >= at + text.length &&
  [...text].every((char, i) => bytes[at + i] === char.charCodeAt(0));

/** The media type the file's magic bytes show, or undefined for none of the known ones. */
export function sniffMediaType(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, "\x89PNG\r\n\x1a\n")) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (startsWith(bytes, "GIF87a") || startsWith(bytes, "GIF89a")) return "image/gif";
  if (startsWith(bytes, "RIFF") && startsWith(bytes, "WEBP", 8)) return "image/webp";
  if (startsWith(bytes, "%PDF-")) return "application/pdf";
  return undefined;
}

/**
 * The pixel size an image's header declares (read by `image-size`), or undefined when it cannot
 * be read: not one of the four image types, or cut off before the size.
 */
export function imageDimensions(bytes: Uint8Array): Dimensions | undefined {
  const type = sniffMediaType(bytes);
  if (!type?.startsWith("image/")) return undefined;
  try {
    const { width, height } = imageSize(bytes);
    return width > 0 && height > 0 ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}
