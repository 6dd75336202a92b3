/** Incremental framing of a server-sent event stream into its events. */

/** One server-sent event: its `event:` name ("message" when absent) and joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/** A stream that is not SSE as the API speaks it (e.g. an event larger than the limit). */
export class MalformedStream extends Error {
  override name = "MalformedStream";
}

/**
 * Incremental SSE framing (WHATWG rules: `event:`/`data:` fields, `:` comments, a blank line
 * ends an event, CR/LF/CRLF line ends). An unfinished line may not grow beyond `maxBytes`.
 */
export class SseDecoder {
  #decoder = new TextDecoder();
  #buffer = "";
  #event = "";
  #data: string[] = [];
  #dataChars = 0;
  /** A CR ended the last chunk: a LF starting the next one belongs to it. */
  #pendingCr = false;

  constructor(readonly maxBytes = 8 * 1024 * 1024) {}

  push(bytes: Uint8Array): SseEvent[] {
    return this.#feed(this.#decoder.decode(bytes, { stream: true }));
  }

  /** Events completed by the end of the stream (a last event without its blank line counts). */
  end(): SseEvent[] {
    const events = this.#feed(this.#decoder.decode());
    if (this.#buffer) this.#line(this.#buffer, events);
    this.#buffer = "";
    this.#dispatch(events);
    return events;
  }

  #feed(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.#pendingCr = false;
    const buffer = this.#buffer + text;
    // CR line ends are rare: without one a single indexOf per line will do.
    const hasCr = buffer.includes("\r");
    let start = 0;
    for (;;) {
      const end = hasCr ? nextLineEnd(buffer, start) : buffer.indexOf("\n", start);
      if (end === -1) break;
      this.#line(buffer.slice(start, end), events);
      start = end + 1;
      if (buffer[end] === "\r") {
        if (start === buffer.length) this.#pendingCr = true;
        else if (buffer[start] === "\n") start++;
      }
    }
    const rest = buffer.slice(start);
    if (rest.length > this.maxBytes) {
      throw new MalformedStream(`an SSE line exceeds ${this.maxBytes} bytes`);
    }
    this.#buffer = rest;
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") return this.#dispatch(events);
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") {
      this.#dataChars += value.length;
      if (this.#dataChars > this.maxBytes) {
        throw new MalformedStream(`an SSE event exceeds ${this.maxBytes} bytes`);
      }
      this.#data.push(value);
    }
  }

  #dispatch(events: SseEvent[]): void {
    if (this.#data.length > 0) {
      events.push({ event: this.#event || "message", data: this.#data.join("\n") });
    }
    this.#event = "";
    this.#data = [];
    this.#dataChars = 0;
  }
}

function nextLineEnd(text: string, from: number): number {
  const lf = text.indexOf("\n", from);
  const cr = text.indexOf("\r", from);
  if (cr === -1) return lf;
  if (lf === -1) return cr;
  return Math.min(cr, lf);
}
