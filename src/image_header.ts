/**
 * What the first bytes of an image or PDF file say: its media type (PNG, JPEG, GIF, WebP, PDF)
 * and, for images, its pixel dimensions.
 */

export interface Dimensions {
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

const u16be = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const u16le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8);
const u24le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const u32be = (b: Uint8Array, i: number) =>
  ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + u16be(b, i + 2);

function webpDimensions(b: Uint8Array): Dimensions | undefined {
  if (startsWith(b, "VP8 ", 12) && b.length >= 30) {
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (startsWith(b, "VP8L", 12) && b.length >= 25) {
    return {
      width: 1 + (((b[22] & 0x3f) << 8) | b[21]),
      height: 1 + (((b[24] & 0x0f) << 10) | (b[23] << 2) | ((b[22] & 0xc0) >> 6)),
    };
  }
  if (startsWith(b, "VP8X", 12) && b.length >= 30) {
    return { width: 1 + u24le(b, 24), height: 1 + u24le(b, 27) };
  }
  return undefined;
}

/** Start-of-frame markers, which carry the dimensions (not DHT C4, JPG C8, DAC CC). */
const isStartOfFrame = (marker: number) =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function jpegDimensions(b: Uint8Array): Dimensions | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (isStartOfFrame(marker)) return { height: u16be(b, i + 5), width: u16be(b, i + 7) };
    // Markers without a length: TEM, RSTn, SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    i += 2 + u16be(b, i + 2);
  }
  return undefined;
}

/** The pixel size an image's header declares, or undefined when it cannot be read. */
export function imageDimensions(bytes: Uint8Array): Dimensions | undefined {
  let dimensions: Dimensions | undefined;
  switch (sniffMediaType(bytes)) {
    case "image/png":
      if (bytes.length >= 24) dimensions = { width: u32be(bytes, 16), height: u32be(bytes, 20) };
      break;
    case "image/gif":
      if (bytes.length >= 10) dimensions = { width: u16le(bytes, 6), height: u16le(bytes, 8) };
      break;
    case "image/webp":
      dimensions = webpDimensions(bytes);
      break;
    case "image/jpeg":
      dimensions = jpegDimensions(bytes);
      break;
  }
  return dimensions && dimensions.width > 0 && dimensions.height > 0 ? dimensions : undefined;
}
