/**
 * The one SSE reader for tests and benches: turns a server-sent-event text or a fetch Response's
 * body into records of `{event, data}` — whole, incrementally as chunks arrive, or one record at
 * a time from a live stream.
 */

/** One SSE record as it came over the wire. */
export interface SseRecord {
  /** The block's text (without the blank line ending it). */
  raw: string;
  /** The `event:` name, or undefined when the block had none. */
  event: string | undefined;
  /** The data lines joined by newlines (empty when there were none). */
  text: string;
  /** The data parsed as JSON, else the text itself; undefined when there were no data lines. */
  // deno-lint-ignore no-explicit-any
  data: any;
}

/** One block's record. */
export function parseRecord(raw: string): SseRecord {
  let event: string | undefined;
  const lines: string[] = [];
  for (const line of raw.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) lines.push(line.slice(5).replace(/^ /, ""));
  }
  const text = lines.join("\n");
  let data: unknown = undefined;
  if (lines.length) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  return { raw, event, text, data };
}

/** Incremental: feed decoded text as it arrives, get each completed record once. */
export class SseDecoder {
  #buffer = "";

  push(text: string): SseRecord[] {
    this.#buffer += text;
    // A CR LF pair split across two chunks is joined before it is normalised.
    const safe = this.#buffer.endsWith("\r") ? this.#buffer.length - 1 : this.#buffer.length;
    const ready = this.#buffer.slice(0, safe).replaceAll("\r\n", "\n");
    this.#buffer = ready + this.#buffer.slice(safe);
    const records: SseRecord[] = [];
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end === -1) return records;
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      if (block.trim()) records.push(parseRecord(block));
    }
  }

  /** The record left unterminated at the end of the stream, if any. */
  end(): SseRecord[] {
    const rest = this.#buffer.replaceAll("\r\n", "\n");
    this.#buffer = "";
    return rest.trim() ? [parseRecord(rest.replace(/\n+$/, ""))] : [];
  }
}

/** Every record of a whole SSE text. */
export function parseSse(text: string): SseRecord[] {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.end()];
}

/** Reads a Response's records one by one as they arrive; disposing it cancels the body. */
export class SseReader implements AsyncDisposable {
  #reader: ReadableStreamDefaultReader<string>;
  #decoder = new SseDecoder();
  #pending: SseRecord[] = [];
  #done = false;
  /** Every record read so far. */
  readonly records: SseRecord[] = [];

  constructor(response: Response) {
    if (!response.body) throw new Error(`no body to read (status ${response.status})`);
    this.#reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next record, or undefined at the end of the stream. */
  async next(): Promise<SseRecord | undefined> {
    while (!this.#pending.length && !this.#done) {
      const { value, done } = await this.#reader.read();
      if (done) {
        this.#done = true;
        this.#pending.push(...this.#decoder.end());
      } else this.#pending.push(...this.#decoder.push(value));
    }
    const record = this.#pending.shift();
    if (record) this.records.push(record);
    return record;
  }

  /** Reads until a record with this event name (inclusive); throws if the stream ends first. */
  async until(event: string): Promise<SseRecord> {
    for (;;) {
      const record = await this.next();
      if (!record) throw new Error(`stream ended before ${event}`);
      if (record.event === event) return record;
    }
  }

  /** Reads everything that is left; returns every record read. */
  async rest(): Promise<SseRecord[]> {
    while (await this.next());
    return this.records;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SseRecord> {
    for (let record = await this.next(); record; record = await this.next()) yield record;
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.cancel();
  }
}

/** Every record of a Response's body. */
export function readSse(response: Response): Promise<SseRecord[]> {
  return new SseReader(response).rest();
}
