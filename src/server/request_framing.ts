/**
 * Where each HTTP/1.1 request on a connection begins, where its head ends and where its body
 * ends, from the bytes a client sends: what the connection layer needs to time out a slow head
 * or body and to tell an idle connection from a busy one.
 *
 * Strict on purpose: a head is passed on only once it is complete and unambiguous (CRLF line
 * ends, no folded lines, one body length, `chunked` as the only transfer coding), so the HTTP
 * server behind it frames every request exactly as this does. Each head is rebuilt with one
 * header added, naming the connection it came through; a client's own copy is dropped.
 */

/** What feeding bytes produced, in order. */
export type FramingStep =
  /** Bytes to pass on to the HTTP server. */
  | { kind: "forward"; bytes: Uint8Array }
  /** The first byte of a request arrived (its head is being read). */
  | { kind: "start" }
  /** The head is complete; `body` says whether a body follows. */
  | { kind: "head"; body: boolean }
  /** The request (head and body) is complete. */
  | { kind: "complete" }
  /** The bytes are not a request this layer passes on; answer `status` and close. */
  | { kind: "reject"; status: 400 | 431 | 501 | 505; message: string };

interface FramingLimits {
  /** Largest request head (request line and headers). */
  maxHeadBytes: number;
  /** Largest chunk-size line or trailer section of a chunked body. */
  maxLineBytes: number;
}

const DEFAULT_FRAMING_LIMITS: FramingLimits = { maxHeadBytes: 65_536, maxLineBytes: 4_096 };

type State = "between" | "head" | "fixed" | "size" | "data" | "dataEnd" | "trailer" | "failed";

const CR = 0x0d;
const LF = 0x0a;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/(\d)\.(\d)$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,15})(;[^\r\n]*)?$/;

/** Bytes as a string of the same length (one char per byte), and back. */
const latin1 = new TextDecoder("latin1");
function fromLatin1(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Index just past the first CRLF CRLF at or after `from`, or -1. */
function headEnd(bytes: Uint8Array, from: number): number {
  for (let i = Math.max(3, from); i < bytes.length; i++) {
    if (bytes[i] === LF && bytes[i - 1] === CR && bytes[i - 2] === LF && bytes[i - 3] === CR) {
      return i + 1;
    }
  }
  return -1;
}

/** Index just past the first CRLF at or after `from`, or -1. */
function lineEnd(bytes: Uint8Array, from: number): number {
  for (let i = Math.max(1, from); i < bytes.length; i++) {
    if (bytes[i] === LF && bytes[i - 1] === CR) return i + 1;
  }
  return -1;
}

type Reject = Extract<FramingStep, { kind: "reject" }>;
const reject = (status: Reject["status"], message: string): Reject => ({
  kind: "reject",
  status,
  message,
});

/** A parsed head: the rebuilt bytes to pass on and how its body is framed. */
type ParsedHead =
  | { ok: true; bytes: Uint8Array; body: { kind: "none" } | { kind: "fixed"; length: number } }
  | { ok: true; bytes: Uint8Array; body: { kind: "chunked" } }
  | { ok: false; reject: Reject };

/** Body length from the Content-Length values (all equal, digits only), or an error. */
function contentLength(values: string[]): number | Reject {
  const lengths = new Set(values.flatMap((v) => v.split(",").map((part) => part.trim())));
  if (lengths.size !== 1) return reject(400, "conflicting content-length headers");
  const [length] = lengths;
  if (!/^\d{1,15}$/.test(length)) return reject(400, "invalid content-length header");
  return Number(length);
}

/**
 * Parses a complete head (`text` ends with CRLF CRLF) and rebuilds it with `extra` (a header
 * line without CRLF) after the request line, dropping the client's lines of the same name.
 */
function parseHead(text: string, extra: { name: string; value: string }): ParsedHead {
  const lines = text.slice(0, -4).split("\r\n");
  const requestLine = REQUEST_LINE.exec(lines[0]);
  if (!requestLine) return { ok: false, reject: reject(400, "malformed request line") };
  if (requestLine[3] !== "1") return { ok: false, reject: reject(505, "only HTTP/1.x is served") };
  const kept: string[] = [lines[0], `${extra.name}: ${extra.value}`];
  const lengths: string[] = [];
  const codings: string[] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name) || /[\r\n\0]/.test(line)) {
      return { ok: false, reject: reject(400, "malformed header line") };
    }
    const lower = name.toLowerCase();
    if (lower === extra.name) continue;
    const value = line.slice(colon + 1).trim();
    if (lower === "content-length") lengths.push(value);
    if (lower === "transfer-encoding") codings.push(value);
    kept.push(line);
  }
  const bytes = fromLatin1(kept.join("\r\n") + "\r\n\r\n");
  if (codings.length > 0) {
    if (lengths.length > 0) {
      return { ok: false, reject: reject(400, "both content-length and transfer-encoding") };
    }
    if (codings.join(",").trim().toLowerCase() !== "chunked") {
      return { ok: false, reject: reject(501, "only the chunked transfer coding is served") };
    }
    return { ok: true, bytes, body: { kind: "chunked" } };
  }
  if (lengths.length === 0) return { ok: true, bytes, body: { kind: "none" } };
  const length = contentLength(lengths);
  if (typeof length !== "number") return { ok: false, reject: length };
  return { ok: true, bytes, body: length > 0 ? { kind: "fixed", length } : { kind: "none" } };
}

/**
 * Follows the requests of one connection as its bytes arrive. Bytes of an unfinished head or
 * chunk line are held (amortised growth, never re-copied while they wait), so a head trickled a
 * byte at a time costs linear work.
 */
export class RequestFraming {
  #state: State = "between";
  #held = new Uint8Array(1024);
  #heldLength = 0;
  #scanned = 0;
  #remaining = 0;
  #trailerBytes = 0;
  readonly #extra: { name: string; value: string };
  readonly #limits: FramingLimits;

  /** `extra` is added to every head (its name in lower case). */
  constructor(extra: { name: string; value: string }, limits = DEFAULT_FRAMING_LIMITS) {
    this.#extra = { name: extra.name.toLowerCase(), value: extra.value };
    this.#limits = limits;
  }

  /** Whether a request has started and is not yet complete. */
  get midRequest(): boolean {
    return this.#state !== "between" && this.#state !== "failed";
  }

  /**
   * Takes the next bytes from the client; returns what they mean. Forwarded bytes may view
   * `chunk` or the held bytes: pass them on before the next call.
   */
  feed(chunk: Uint8Array): FramingStep[] {
    const steps: FramingStep[] = [];
    const bytes = this.#heldLength === 0 ? chunk : this.#append(chunk);
    let offset = 0;
    while (offset < bytes.length && this.#state !== "failed") {
      const used = this.#step(bytes.subarray(offset), steps);
      if (used < 0) break; // waiting for the rest of a head or line
      offset += used;
    }
    this.#keep(this.#state === "failed" ? new Uint8Array(0) : bytes.subarray(offset), bytes);
    return steps;
  }

  #append(chunk: Uint8Array): Uint8Array {
    const needed = this.#heldLength + chunk.length;
    if (needed > this.#held.length) {
      const grown = new Uint8Array(Math.max(needed, this.#held.length * 2));
      grown.set(this.#held.subarray(0, this.#heldLength));
      this.#held = grown;
    }
    this.#held.set(chunk, this.#heldLength);
    this.#heldLength = needed;
    return this.#held.subarray(0, needed);
  }

  /** Holds `rest` (the unconsumed end of `bytes`) for the next call. */
  #keep(rest: Uint8Array, bytes: Uint8Array): void {
    if (rest.length === 0) {
      this.#heldLength = 0;
    } else if (this.#heldLength === 0) {
      this.#heldLength = 0;
      this.#append(rest);
    } else if (rest.length !== this.#heldLength) {
      this.#held.copyWithin(0, bytes.length - rest.length, bytes.length);
      this.#heldLength = rest.length;
    }
  }

  /** Consumes from `bytes` in the current state; returns how many, or -1 to wait for more. */
  #step(bytes: Uint8Array, steps: FramingStep[]): number {
    switch (this.#state) {
      case "between":
        return this.#between(bytes, steps);
      case "head":
        return this.#head(bytes, steps);
      case "fixed":
      case "data":
        return this.#data(bytes, steps);
      case "size":
        return this.#line(bytes, steps, (line) => this.#chunkSize(line));
      case "dataEnd":
        return this.#dataEnd(bytes, steps);
      case "trailer":
        return this.#line(bytes, steps, (line) => this.#trailer(line, steps));
      default:
        return bytes.length;
    }
  }

  #between(bytes: Uint8Array, steps: FramingStep[]): number {
    // An empty line before a request is tolerated (RFC 9112 §2.2) and dropped.
    if (bytes[0] === CR || bytes[0] === LF) return 1;
    this.#state = "head";
    this.#scanned = 0;
    steps.push({ kind: "start" });
    return 0;
  }

  #head(bytes: Uint8Array, steps: FramingStep[]): number {
    const end = headEnd(bytes, this.#scanned);
    if (end < 0) {
      if (bytes.length > this.#limits.maxHeadBytes) {
        return this.#fail(steps, reject(431, "request head too large"));
      }
      this.#scanned = Math.max(0, bytes.length - 3);
      return -1;
    }
    if (end > this.#limits.maxHeadBytes) {
      return this.#fail(steps, reject(431, "request head too large"));
    }
    const head = parseHead(latin1.decode(bytes.subarray(0, end)), this.#extra);
    if (!head.ok) return this.#fail(steps, head.reject);
    steps.push({ kind: "forward", bytes: head.bytes });
    steps.push({ kind: "head", body: head.body.kind !== "none" });
    if (head.body.kind === "fixed") {
      this.#state = "fixed";
      this.#remaining = head.body.length;
    } else if (head.body.kind === "chunked") {
      this.#state = "size";
    } else {
      this.#complete(steps);
    }
    return end;
  }

  #data(bytes: Uint8Array, steps: FramingStep[]): number {
    const take = Math.min(this.#remaining, bytes.length);
    steps.push({ kind: "forward", bytes: bytes.subarray(0, take) });
    this.#remaining -= take;
    if (this.#remaining === 0) {
      if (this.#state === "fixed") this.#complete(steps);
      else this.#state = "dataEnd";
    }
    return take;
  }

  #dataEnd(bytes: Uint8Array, steps: FramingStep[]): number {
    if (bytes.length < 2) return -1;
    if (bytes[0] !== CR || bytes[1] !== LF) {
      return this.#fail(steps, reject(400, "malformed chunked body"));
    }
    steps.push({ kind: "forward", bytes: bytes.subarray(0, 2) });
    this.#state = "size";
    return 2;
  }

  /** Reads one CRLF-terminated line, passes it on and hands it (without CRLF) to `use`. */
  #line(bytes: Uint8Array, steps: FramingStep[], use: (line: string) => Reject | null): number {
    const end = lineEnd(bytes, 0);
    if (end < 0) {
      if (bytes.length > this.#limits.maxLineBytes) {
        return this.#fail(steps, reject(400, "malformed chunked body"));
      }
      return -1;
    }
    if (end > this.#limits.maxLineBytes) {
      return this.#fail(steps, reject(400, "malformed chunked body"));
    }
    const line = latin1.decode(bytes.subarray(0, end - 2));
    if (/[\r\n]/.test(line)) return this.#fail(steps, reject(400, "malformed chunked body"));
    steps.push({ kind: "forward", bytes: bytes.subarray(0, end) });
    const problem = use(line);
    return problem ? this.#fail(steps, problem) : end;
  }

  #chunkSize(line: string): Reject | null {
    const size = CHUNK_SIZE.exec(line);
    if (!size) return reject(400, "malformed chunk size");
    this.#remaining = parseInt(size[1], 16);
    if (this.#remaining === 0) {
      this.#state = "trailer";
      this.#trailerBytes = 0;
    } else {
      this.#state = "data";
    }
    return null;
  }

  #trailer(line: string, steps: FramingStep[]): Reject | null {
    if (line === "") {
      this.#complete(steps);
      return null;
    }
    this.#trailerBytes += line.length + 2;
    if (this.#trailerBytes > this.#limits.maxLineBytes) return reject(400, "trailer too large");
    const colon = line.indexOf(":");
    return colon > 0 && TOKEN.test(line.slice(0, colon)) ? null : reject(400, "malformed trailer");
  }

  #complete(steps: FramingStep[]): void {
    this.#state = "between";
    steps.push({ kind: "complete" });
  }

  #fail(steps: FramingStep[], problem: Reject): number {
    this.#state = "failed";
    steps.push(problem);
    return -1;
  }
}
