/**
 * HTTP/1.1 on the wire, as pure functions: a request head out; a response head, its body's
 * framing and a chunked body's decoding in.
 */

/** The reply's start line and headers. */
export interface ResponseHead {
  status: number;
  statusText: string;
  headers: Headers;
  /** The server keeps the connection open after this reply (HTTP/1.1 without `close`). */
  keepAlive: boolean;
}

/** How the body after a head is delimited (RFC 9112 §6.3). */
export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

/** The reply does not follow HTTP/1.1: the connection cannot be trusted any further. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(`malformed HTTP reply: ${message}`);
    this.name = "ProtocolError";
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Field values: visible characters, spaces and tabs (obs-text allowed); never CR, LF or NUL.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Whether a header value can be sent as it is (no CR, LF, NUL or other control character). */
export function isFieldValue(value: string): boolean {
  return FIELD_VALUE.test(value);
}

/**
 * `POST /path?query HTTP/1.1` with `host`, the caller's headers and `content-length`. Throws a
 * TypeError on a header that would break the framing (a name that is not a token, a value
 * with CR, LF or NUL): a header must never be able to smuggle another.
 */
export function requestHead(
  method: string,
  url: URL,
  headers: Readonly<Record<string, string>>,
  bodyLength: number,
): string {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new TypeError(`invalid header name: ${JSON.stringify(name)}`);
    if (!FIELD_VALUE.test(value)) throw new TypeError(`invalid value for header ${name}`);
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "transfer-encoding") continue;
    head += `${name}: ${value}\r\n`;
  }
  return `${head}content-length: ${bodyLength}\r\n\r\n`;
}

/** Where the head ending `\r\n\r\n` finishes in `bytes`, or -1 when it has not arrived. */
export function headEnd(bytes: Uint8Array, from = 0): number {
  for (let i = Math.max(from, 3); i < bytes.length; i++) {
    if (
      bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13
    ) return i + 1;
  }
  return -1;
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

/** Parses a response head (the text up to and including its blank line). */
export function parseResponseHead(text: string): ResponseHead {
  const lines = text.split("\r\n");
  const match = STATUS_LINE.exec(lines[0]);
  if (!match) throw new ProtocolError(`bad status line ${JSON.stringify(lines[0].slice(0, 80))}`);
  const fields: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    const last = fields.at(-1);
    if (/^[ \t]/.test(line) && last) {
      // obs-fold (RFC 9112 §5.2): a continuation line joins the previous value with a space.
      last[1] = `${last[1]} ${line.trim()}`.trim();
      continue;
    }
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new ProtocolError(`bad header line ${JSON.stringify(line)}`);
    fields.push([name, line.slice(colon + 1).trim()]);
  }
  const headers = new Headers();
  for (const [name, value] of fields) {
    try {
      headers.append(name, value);
    } catch {
      throw new ProtocolError(`bad value for header ${name}`);
    }
  }
  const connection = (headers.get("connection") ?? "").toLowerCase().split(/\s*,\s*/);
  return {
    status: Number(match[2]),
    statusText: match[3] ?? "",
    headers,
    keepAlive: match[1] === "1" ? !connection.includes("close") : connection.includes("keep-alive"),
  };
}

/** How the body of a reply to `method` with this head is delimited. */
export function bodyFraming(method: string, head: ResponseHead): BodyFraming {
  const { status, headers } = head;
  if (method === "HEAD" || status < 200 || status === 204 || status === 304) {
    return { kind: "none" };
  }
  const encoding = headers.get("transfer-encoding");
  if (encoding !== null) {
    const codings = encoding.toLowerCase().split(/\s*,\s*/);
    if (codings.at(-1) === "chunked") return { kind: "chunked" };
    return { kind: "close" };
  }
  const length = headers.get("content-length");
  if (length !== null) {
    // Repeated content-length headers arrive joined: all must agree.
    const values = new Set(length.split(/\s*,\s*/));
    const only = [...values][0];
    if (values.size !== 1 || !/^\d+$/.test(only)) {
      throw new ProtocolError(`bad content-length ${JSON.stringify(length)}`);
    }
    return { kind: "length", length: Number(only) };
  }
  return { kind: "close" };
}

const MAX_SIZE_LINE = 4096;

/** One call's work: the decoded bytes end at `end` (written in place from `start`). */
export interface Dechunked {
  /** End of the decoded bytes, which now sit at `[start, end)` of the same array. */
  end: number;
  /** Where the input not consumed begins (only short of the input's end once `done`). */
  consumed: number;
  /** The last chunk and its trailers have been read. */
  done: boolean;
}

type State = "size" | "data" | "data-cr" | "data-lf" | "trailer";

/**
 * Decodes a chunked body incrementally and in place: the payload of every chunk in a read is
 * moved down over the framing, so a read of many small chunks becomes one contiguous run of
 * bytes without a copy into a new array.
 */
export class ChunkedDecoder {
  #state: State = "size";
  #remaining = 0;
  #line = "";

  decode(bytes: Uint8Array, start: number, end: number): Dechunked {
    let read = start;
    let write = start;
    while (read < end) {
      switch (this.#state) {
        case "size":
        case "trailer": {
          const lf = bytes.indexOf(10, read);
          const stop = lf === -1 || lf >= end ? end : lf;
          for (let i = read; i < stop; i++) this.#line += String.fromCharCode(bytes[i]);
          if (this.#line.length > MAX_SIZE_LINE) throw new ProtocolError("chunk line too long");
          read = stop;
          if (stop === end) break;
          read++; // the LF
          const line = this.#line.endsWith("\r") ? this.#line.slice(0, -1) : this.#line;
          this.#line = "";
          if (this.#state === "trailer") {
            if (line === "") return { end: write, consumed: read, done: true };
            break; // a trailer field: ignored
          }
          const size = line.split(";")[0].trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(size)) {
            throw new ProtocolError(`bad chunk size ${JSON.stringify(line.slice(0, 40))}`);
          }
          this.#remaining = parseInt(size, 16);
          this.#state = this.#remaining === 0 ? "trailer" : "data";
          break;
        }
        case "data": {
          const n = Math.min(this.#remaining, end - read);
          if (write !== read) bytes.copyWithin(write, read, read + n);
          write += n;
          read += n;
          this.#remaining -= n;
          if (this.#remaining === 0) this.#state = "data-cr";
          break;
        }
        case "data-cr":
        case "data-lf": {
          // The CRLF after a chunk's payload (a bare LF is tolerated).
          const byte = bytes[read++];
          if (byte === 13 && this.#state === "data-cr") this.#state = "data-lf";
          else if (byte === 10) this.#state = "size";
          else throw new ProtocolError("chunk not followed by CRLF");
          break;
        }
      }
    }
    return { end: write, consumed: read, done: false };
  }
}
