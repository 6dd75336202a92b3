/** Shared by the server tests: a config, echo handlers, raw connections and captured logs. */
import { resetSync } from "@logtape/logtape";
import type { Context } from "hono";
import type { Config, ConfigFile } from "../../src/config/mod.ts";
import { setupLogging } from "../../src/base/log.ts";
import type { ProtocolHandler } from "../../src/protocol/protocol_handler.ts";
import { configOf } from "./test_config.ts";
import { within } from "./wait.ts";

export const TOKEN = "srv-Token-0123456789";

/** A config with no agents on an ephemeral port, plus `file`'s keys. */
export function serverConfig(file: ConfigFile = {}): Config {
  return configOf({ port: 0, ...file }, []);
}

/** A handler answering `{handler: label}` at once. */
export const echo = (label: string): ProtocolHandler => (c: Context) => c.json({ handler: label });

const encoder = new TextEncoder();

/** A raw client connection: write text, read what arrives, tell whether it was closed. */
export class RawConnection {
  #conn: Deno.Conn;
  #received = "";
  #closed = false;
  readonly ended: Promise<void>;

  private constructor(conn: Deno.Conn) {
    this.#conn = conn;
    this.ended = this.#read();
  }

  static async open(port: number): Promise<RawConnection> {
    return new RawConnection(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  get received(): string {
    return this.#received;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Resolves once the server closed the connection; fails after `ms` of real time. */
  closedWithin(ms = 5000): Promise<void> {
    return within(this.ended, "the server to close the connection", ms);
  }

  async write(text: string): Promise<void> {
    await this.#conn.write(encoder.encode(text));
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }

  async #read(): Promise<void> {
    const buffer = new Uint8Array(16_384);
    try {
      for (;;) {
        const n = await this.#conn.read(buffer);
        if (n === null) break;
        this.#received += new TextDecoder().decode(buffer.subarray(0, n));
      }
    } catch { /* reset */ }
    this.#closed = true;
  }
}

/** Runs `fn` with logging captured (and returned). */
export async function withLogs(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  setupLogging({ level: "debug", json: false, secrets: [TOKEN], write: (l) => lines.push(l) });
  try {
    await fn();
  } finally {
    resetSync();
  }
  return lines;
}
