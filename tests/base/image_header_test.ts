/** Media type and pixel size read from the first bytes of PNG, JPEG, GIF, WebP and PDF files. */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { imageDimensions, sniffMediaType } from "../../src/base/image_header.ts";
import { pdfBase64, PNG_4X3, pngHeader } from "../fixtures/images.ts";

const bytes = (base64: string) => new Uint8Array(Buffer.from(base64, "base64"));

/** A JPEG whose APP0 segment comes before the SOF0 frame of `width` × `height`. */
function jpeg(width: number, height: number): Uint8Array {
  return new Uint8Array([
    0xff,
    0xd8, // SOI
    0xff,
    0xe0,
    0x00,
    0x06,
    0x4a,
    0x46,
    0x49,
    0x46, // APP0, length 6
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    3,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
  ]);
}

Deno.test("image header: PNG, JPEG, GIF and WebP dimensions", () => {
  assert.deepEqual(imageDimensions(bytes(PNG_4X3)), { width: 4, height: 3 });
  assert.deepEqual(imageDimensions(bytes(pngHeader(1920, 1080))), { width: 1920, height: 1080 });
  assert.deepEqual(imageDimensions(jpeg(640, 480)), { width: 640, height: 480 });
  const gif = new Uint8Array([...new TextEncoder().encode("GIF89a"), 0x2c, 0x01, 0xc8, 0x00]);
  assert.deepEqual(imageDimensions(gif), { width: 300, height: 200 });
  const webp = new Uint8Array(30);
  webp.set(new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8X"));
  webp.set([0x1f, 0x03, 0x00, 0xdf, 0x01, 0x00], 24); // 800 × 480, stored minus one
  assert.deepEqual(imageDimensions(webp), { width: 800, height: 480 });
});

Deno.test("image header: types by magic bytes; unreadable sizes are undefined", () => {
  assert.equal(sniffMediaType(bytes(PNG_4X3)), "image/png");
  assert.equal(sniffMediaType(jpeg(1, 1)), "image/jpeg");
  assert.equal(sniffMediaType(bytes(pdfBase64())), "application/pdf");
  assert.equal(sniffMediaType(new TextEncoder().encode("hello")), undefined);
  assert.equal(imageDimensions(new Uint8Array([0x89, 0x50, 0x4e, 0x47])), undefined, "truncated");
  assert.equal(imageDimensions(new Uint8Array([0xff, 0xd8, 0xff, 0xd9])), undefined, "no frame");
  assert.equal(imageDimensions(bytes(pngHeader(0, 10))), undefined, "zero width");
});
