/**
 * Splits a byte stream into lines with bounded memory: a line longer than the limit is dropped
 * whole or cut, never buffered beyond it.
 */

/**
 * Splits a byte stream into lines, holding at most `maxLineBytes` of the current line: a
 * longer line is dropped whole (`drop`) or cut (`truncate`) without being buffered.
 */
export class LineSplitter {
  #parts: Uint8Array[] = [];
  #size = 0;
  #overflowed = false;
  #decoder = new TextDecoder();
  /** Lines that overflowed (dropped or cut). */
  overflowed = 0;

  constructor(readonly maxLineBytes: number, readonly overflow: "drop" | "truncate") {}

  /** Bytes of the current, unfinished line held in memory (never above `maxLineBytes`). */
  get bufferedBytes(): number {
    return this.#size;
  }

  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      this.#append(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return lines;
      const line = this.#take();
      if (line !== undefined) lines.push(line);
      start = newline + 1;
    }
  }

  /** The last line when the stream ended without a newline. */
  end(): string[] {
    if (this.#size === 0 && !this.#overflowed) return [];
    const line = this.#take();
    return line === undefined ? [] : [line];
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0 || (this.#overflowed && this.overflow === "drop")) return;
    const room = this.maxLineBytes - this.#size;
    if (bytes.length > room) {
      if (!this.#overflowed) this.overflowed++;
      this.#overflowed = true;
      if (this.overflow === "drop") {
        this.#parts = [];
        this.#size = 0;
        return;
      }
      bytes = bytes.subarray(0, room);
    }
    if (bytes.length === 0) return;
    this.#parts.push(bytes.slice());
    this.#size += bytes.length;
  }

  #take(): string | undefined {
    const dropped = this.#overflowed && this.overflow === "drop";
    const bytes = new Uint8Array(this.#size);
    let offset = 0;
    for (const part of this.#parts) {
      bytes.set(part, offset);
      offset += part.length;
    }
    this.#parts = [];
    this.#size = 0;
    this.#overflowed = false;
    if (dropped) return undefined;
    const text = this.#decoder.decode(bytes);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  }
}
