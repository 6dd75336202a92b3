/**
 * A minimal HTTP/1.1 client on one keep-alive TCP connection, for timing streams whose events
 * come fast: it reads whatever the socket holds (so bytes that arrive together cost one read,
 * however many HTTP chunks or SSE events they hold), unlike `fetch`, whose body yields every
 * HTTP chunk on its own and so charges the client per chunk the server wrote. Only what the
 * bench's servers send is handled: a status line, headers, then a chunked or sized body.
 */

const encoder = new TextEncoder();
const CRLF_CRLF = encoder.encode("\r\n\r\n");
const READ_BYTES = 256 * 1024;

export interface RawResponse {
  status: number;
  /** Request written → the first body byte holding `firstMarker`, ms (NaN when never seen). */
  firstMarkerMs: number;
  /** Request written → the body's last byte, ms. */
  fullMs: number;
  /** The decoded body. */
  body: Uint8Array;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = Math.max(0, from); i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** One connection; requests go one after another. */
export class RawClient {
  #conn: Deno.TcpConn;
  #host: string;
  #buffer = new Uint8Array(READ_BYTES);
  /** Bytes read but not yet consumed (the start of the next response, normally empty). */
  #pending: Uint8Array = new Uint8Array(0);

  private constructor(conn: Deno.TcpConn, host: string) {
    this.#conn = conn;
    this.#host = host;
  }

  static async connect(origin: string): Promise<RawClient> {
    const url = new URL(origin);
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port || 80) });
    conn.setNoDelay(true);
    return new RawClient(conn, url.host);
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }

  async #read(): Promise<Uint8Array> {
    if (this.#pending.length) {
      const data = this.#pending;
      this.#pending = new Uint8Array(0);
      return data;
    }
    const n = await this.#conn.read(this.#buffer);
    if (n === null) throw new Error("connection closed by the server");
    return this.#buffer.slice(0, n);
  }

  /**
   * POSTs a JSON body and reads the whole response, timing the first `firstMarker`; `onBody`
   * gets each piece of the decoded body with `performance.now()` at the read that brought it.
   */
  async post(
    path: string,
    json: string,
    firstMarker: string,
    onBody?: (bytes: Uint8Array, receivedAt: number) => void,
  ): Promise<RawResponse> {
    const payload = encoder.encode(json);
    const head = encoder.encode(
      `POST ${path} HTTP/1.1\r\nhost: ${this.#host}\r\ncontent-type: application/json\r\n` +
        `content-length: ${payload.length}\r\nconnection: keep-alive\r\n\r\n`,
    );
    const marker = encoder.encode(firstMarker);
    const started = performance.now();
    await writeAll(this.#conn, concat(head, payload));

    let data: Uint8Array = new Uint8Array(0);
    let headerEnd = -1;
    while (headerEnd === -1) {
      data = concat(data, await this.#read());
      headerEnd = indexOf(data, CRLF_CRLF);
    }
    const headerText = new TextDecoder().decode(data.subarray(0, headerEnd));
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headerText)?.[1] ?? 0);
    const chunked = /^transfer-encoding:\s*chunked/im.test(headerText);
    const length = Number(/^content-length:\s*(\d+)/im.exec(headerText)?.[1] ?? NaN);
    let raw = data.subarray(headerEnd + 4);

    const body = new BodyDecoder(chunked, length);
    let firstMarkerMs = NaN;
    let searchFrom = 0;
    let receivedAt = performance.now();
    if (onBody) body.onPiece = (piece) => onBody(piece, receivedAt);
    for (;;) {
      const rest = body.push(raw);
      if (Number.isNaN(firstMarkerMs)) {
        const at = indexOf(body.bytes, marker, searchFrom);
        if (at !== -1) firstMarkerMs = performance.now() - started;
        else searchFrom = Math.max(0, body.bytes.length - marker.length);
      }
      if (body.done) {
        this.#pending = rest;
        break;
      }
      raw = await this.#read();
      receivedAt = performance.now();
    }
    return { status, firstMarkerMs, fullMs: performance.now() - started, body: body.bytes };
  }
}

async function writeAll(conn: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
}

/** Decodes a chunked (or sized) body as it arrives; `done` once its end has been read. */
export class BodyDecoder {
  #parts: Uint8Array[] = [];
  #size = 0;
  #joined?: Uint8Array;
  /** Chunked state: bytes left in the current chunk, or -1 while reading a size line. */
  #left = -1;
  #line: number[] = [];
  /** After the last (zero) chunk: the final CRLF still to come. */
  #ending = false;
  /** A data chunk's trailing CRLF still to skip (bytes). */
  #skip = 0;
  done = false;
  /** Called with each piece of body as it is decoded. */
  onPiece?: (bytes: Uint8Array) => void;

  constructor(readonly chunked: boolean, readonly length: number) {
    if (!chunked && length === 0) this.done = true;
  }

  get bytes(): Uint8Array {
    if (!this.#joined) {
      const out = new Uint8Array(this.#size);
      let offset = 0;
      for (const part of this.#parts) {
        out.set(part, offset);
        offset += part.length;
      }
      this.#parts = [out];
      this.#joined = out;
    }
    return this.#joined;
  }

  #keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.onPiece?.(bytes);
    this.#parts.push(bytes);
    this.#size += bytes.length;
    this.#joined = undefined;
  }

  /** Consumes body bytes; returns what lies beyond the body's end. */
  push(data: Uint8Array): Uint8Array {
    if (!this.chunked) {
      const room = this.length - this.#size;
      this.#keep(data.subarray(0, room));
      if (this.#size >= this.length) this.done = true;
      return data.subarray(Math.min(room, data.length));
    }
    let i = 0;
    while (i < data.length && !this.done) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, data.length - i);
        this.#skip -= n;
        i += n;
      } else if (this.#left > 0) {
        const n = Math.min(this.#left, data.length - i);
        this.#keep(data.subarray(i, i + n));
        this.#left -= n;
        i += n;
        if (this.#left === 0) {
          this.#left = -1;
          this.#skip = 2;
        }
      } else {
        const byte = data[i++];
        if (byte !== 10) {
          if (byte !== 13) this.#line.push(byte);
          continue;
        }
        const line = String.fromCharCode(...this.#line);
        this.#line = [];
        if (this.#ending) {
          if (line === "") this.done = true;
          continue;
        }
        const size = parseInt(line.split(";")[0], 16);
        if (Number.isNaN(size)) throw new Error(`bad chunk size line: ${JSON.stringify(line)}`);
        if (size === 0) this.#ending = true;
        else this.#left = size;
      }
    }
    return data.subarray(i);
  }
}

/** The text of every `text_delta` in an Anthropic SSE body, joined. */
export function answerOf(body: Uint8Array): string {
  let answer = "";
  for (const line of new TextDecoder().decode(body).split("\n")) {
    if (!line.startsWith("data: ") || !line.includes('"text_delta"')) continue;
    const delta = JSON.parse(line.slice(6)).delta;
    if (delta?.type === "text_delta") answer += delta.text;
  }
  return answer;
}
