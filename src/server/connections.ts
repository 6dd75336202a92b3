/**
 * The gateway's listening socket: accepts each TCP connection itself, counts it against a cap,
 * times out a slow head, a slow body and an idle keep-alive connection, and passes the bytes on
 * to the HTTP server behind it.
 *
 * Why this is written here rather than taken from the runtime: `Deno.serve` (Deno 2.9) has no
 * header, body or keep-alive time-out and no connection cap, so idle or trickling clients hold
 * sockets forever; and its accept loop ends the server on the first accept error, so running
 * out of file descriptors (EMFILE) ended the gateway. This layer keeps `Deno.serve` for HTTP
 * itself and only decides who gets a connection, and for how long.
 */
import type { Logger } from "@logtape/logtape";
import type { Clock, TimerId } from "../base/clock.ts";
import { type FramingStep, RequestFraming } from "./request_framing.ts";
import { errorBody, errorHeaders } from "../protocol/error_envelope.ts";

/** The header the HTTP server reads to find the connection a request came through. */
export const CONNECTION_HEADER = "x-council-connection";

export interface ConnectionLimits {
  /** Open connections at most; more are refused with 503 and closed. */
  maxConnections: number;
  /** From accepting a connection (or a request's first byte after an idle spell) to its full head. */
  headerTimeoutMs: number;
  /** From a request's head to the end of its body. */
  bodyTimeoutMs: number;
  /** How long a connection with no request in flight stays open. */
  idleTimeoutMs: number;
}

/** What the HTTP server learns about a request's connection. */
interface ConnectionInfo {
  /** The client's address (no port). */
  peer: string;
  /** The response to one request on this connection has been sent (or given up). */
  responseDone(): void;
}

interface GateOptions {
  /** The public listener, already bound. */
  listener: Deno.Listener;
  /** Opens a connection to the HTTP server behind the gate. */
  connectUpstream: () => Promise<Deno.Conn>;
  limits: ConnectionLimits;
  clock: Clock;
  log: Logger;
}

const encoder = new TextEncoder();
const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

/**
 * A complete response written by the gate itself, then the connection closes. No request was
 * read, so the body carries both protocols' error fields (Anthropic's `type`, OpenAI's
 * `param`/`code`).
 */
export function gateResponse(status: number, message: string, retryAfterS?: number): Uint8Array {
  const body = JSON.stringify(errorBody("unknown", status, message));
  const length = encoder.encode(body).length;
  const headers = Object.entries(errorHeaders({ retryAfterSec: retryAfterS }))
    .map(([name, value]) => `${name}: ${value}\r\n`).join("");
  return encoder.encode(
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\ncontent-type: application/json\r\n` +
      `${headers}connection: close\r\ncontent-length: ${length}\r\n\r\n${body}`,
  );
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

function closeQuietly(conn: Deno.Conn | undefined): void {
  try {
    conn?.close();
  } catch { /* already closed */ }
}

type TimerKind = "header" | "body" | "idle";

/** What a connection waits for: a request's head or body, its response, or the next request. */
export type ConnectionPhase = "head" | "body" | "response" | "idle";

/** One client connection and its connection to the HTTP server. */
class Connection implements ConnectionInfo {
  readonly id = crypto.randomUUID();
  readonly peer: string;
  #client: Deno.Conn;
  #upstream: Deno.Conn | undefined;
  #framing: RequestFraming;
  #outstanding = 0;
  #timer: { kind: TimerKind; id: TimerId } | undefined;
  #closed = false;
  #gate: Gate;

  constructor(client: Deno.Conn, gate: Gate) {
    this.#client = client;
    this.#gate = gate;
    this.peer = (client.remoteAddr as Deno.NetAddr).hostname ?? "unknown";
    this.#framing = new RequestFraming({ name: CONNECTION_HEADER, value: this.id });
  }

  get idle(): boolean {
    return this.#outstanding === 0 && !this.#framing.midRequest;
  }

  get phase(): ConnectionPhase {
    const kind = this.#timer?.kind;
    return kind === "header" ? "head" : kind ?? (this.idle ? "idle" : "response");
  }

  async run(): Promise<void> {
    this.#arm("header", this.#gate.limits.headerTimeoutMs);
    try {
      this.#upstream = await this.#gate.connectUpstream();
    } catch (error) {
      this.#gate.log.warn("refused a connection: the HTTP server is unreachable: {error}", {
        error: (error as Error).message,
      });
      return this.#answerAndClose(503, "the gateway cannot take connections right now", 1);
    }
    if (this.#closed) return closeQuietly(this.#upstream);
    await Promise.all([this.#fromClient(this.#upstream), this.#toClient(this.#upstream)]);
  }

  responseDone(): void {
    this.#outstanding = Math.max(0, this.#outstanding - 1);
    if (this.idle && !this.#closed) this.#arm("idle", this.#gate.limits.idleTimeoutMs);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#disarm();
    closeQuietly(this.#client);
    closeQuietly(this.#upstream);
    this.#gate.forget(this);
  }

  async #fromClient(upstream: Deno.Conn): Promise<void> {
    const buffer = new Uint8Array(65_536);
    try {
      for (;;) {
        const n = await this.#client.read(buffer);
        if (n === null) break;
        for (const step of this.#framing.feed(buffer.subarray(0, n))) {
          if (!(await this.#apply(step, upstream))) return;
        }
      }
      if (this.idle) return this.close();
      await upstream.closeWrite(); // the client is done sending; its responses may still come
    } catch {
      this.close();
    }
  }

  /** Acts on one framing step; false once the connection is closed. */
  async #apply(step: FramingStep, upstream: Deno.Conn): Promise<boolean> {
    switch (step.kind) {
      case "forward":
        await writeAll(upstream, step.bytes);
        break;
      case "start":
        if (this.#timer?.kind !== "header") this.#arm("header", this.#gate.limits.headerTimeoutMs);
        break;
      case "head":
        this.#outstanding++;
        if (step.body) this.#arm("body", this.#gate.limits.bodyTimeoutMs);
        else this.#disarm();
        break;
      case "complete":
        // Its response may take as long as the turn does; one may already have been sent.
        if (this.#outstanding === 0) this.#arm("idle", this.#gate.limits.idleTimeoutMs);
        else this.#disarm();
        break;
      case "reject":
        await this.#answerAndClose(step.status, step.message);
        break;
    }
    return !this.#closed;
  }

  async #toClient(upstream: Deno.Conn): Promise<void> {
    const buffer = new Uint8Array(65_536);
    try {
      for (;;) {
        const n = await upstream.read(buffer);
        if (n === null) break;
        await writeAll(this.#client, buffer.subarray(0, n));
      }
    } catch { /* either side went away */ }
    this.close();
  }

  /** Answers with the gate's own response when no response is under way, then closes. */
  async #answerAndClose(status: number, message: string, retryAfterS?: number): Promise<void> {
    if (this.#outstanding === 0 && !this.#closed) {
      this.#disarm();
      // Bounded: a client that reads nothing cannot hold the connection open through this.
      const timer = this.#gate.clock.setTimeout(() => this.close(), 1000);
      await writeAll(this.#client, gateResponse(status, message, retryAfterS)).catch(() => {});
      this.#gate.clock.clearTimeout(timer);
    }
    this.close();
  }

  #arm(kind: TimerKind, ms: number): void {
    this.#disarm();
    const id = this.#gate.clock.setTimeout(() => this.#expire(kind), ms);
    this.#timer = { kind, id };
  }

  #disarm(): void {
    if (this.#timer) this.#gate.clock.clearTimeout(this.#timer.id);
    this.#timer = undefined;
  }

  #expire(kind: TimerKind): void {
    this.#timer = undefined;
    this.#gate.log.debug("closed a connection from {peer}: {kind} time-out", {
      peer: this.peer,
      kind,
    });
    if (kind === "header") void this.#answerAndClose(408, "request head not received in time");
    else this.close(); // mid-body or idle: a response could be under way, so no reply of ours
  }
}

/** The accepting layer; see the module comment. */
export class Gate {
  readonly limits: ConnectionLimits;
  readonly clock: Clock;
  readonly log: Logger;
  readonly connectUpstream: () => Promise<Deno.Conn>;
  /** Settles once the accept loop has ended (after `stopAccepting`). */
  readonly finished: Promise<void>;
  #listener: Deno.Listener;
  #connections = new Map<string, Connection>();
  #accepting = true;
  #refused = 0;
  #whenEmpty: (() => void)[] = [];

  constructor(options: GateOptions) {
    this.limits = options.limits;
    this.clock = options.clock;
    this.log = options.log;
    this.connectUpstream = options.connectUpstream;
    this.#listener = options.listener;
    this.finished = this.#acceptLoop();
  }

  get addr(): Deno.NetAddr {
    return this.#listener.addr as Deno.NetAddr;
  }

  /** Connections open now. */
  get open(): number {
    return this.#connections.size;
  }

  /** What each open connection waits for, in the order they were accepted. */
  phases(): ConnectionPhase[] {
    return [...this.#connections.values()].map((connection) => connection.phase);
  }

  /** The connection a request names in its `CONNECTION_HEADER`, while it is open. */
  lookup(id: string | null): ConnectionInfo | undefined {
    return id === null ? undefined : this.#connections.get(id);
  }

  /** Closes the listener: no new connections; open ones go on. */
  stopAccepting(): void {
    if (!this.#accepting) return;
    this.#accepting = false;
    try {
      this.#listener.close();
    } catch { /* already closed */ }
  }

  /** Closes open connections: those with nothing in flight, or all. */
  closeConnections(which: "idle" | "all"): void {
    for (const connection of [...this.#connections.values()]) {
      if (which === "all" || connection.idle) connection.close();
    }
  }

  /** Resolves once no connection is open (each ends once its HTTP server side has closed). */
  drained(): Promise<void> {
    if (this.#connections.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#whenEmpty.push(resolve));
  }

  forget(connection: Connection): void {
    this.#connections.delete(connection.id);
    if (this.#connections.size === 0) this.#whenEmpty.splice(0).forEach((resolve) => resolve());
  }

  async #acceptLoop(): Promise<void> {
    let failures = 0;
    while (this.#accepting) {
      let client: Deno.Conn;
      try {
        client = await this.#listener.accept();
      } catch (error) {
        if (!this.#accepting) break;
        // EMFILE, ENFILE, ECONNABORTED…: the connection waits in the kernel's queue; try again.
        if (failures++ === 0) {
          this.log.warn("accepting a connection failed: {error}; retrying", {
            error: (error as Error).message,
          });
        }
        const backoffMs = Math.min(1000, failures * 20);
        await new Promise<void>((resolve) => this.clock.setTimeout(resolve, backoffMs));
        continue;
      }
      if (failures > 0) {
        this.log.info("accepting connections again after {failures} failed attempts", { failures });
        failures = 0;
      }
      this.#admit(client);
    }
  }

  #admit(client: Deno.Conn): void {
    if (this.#connections.size >= this.limits.maxConnections) {
      if (this.#refused++ % 100 === 0) {
        this.log.warn("refused a connection: {open} open, the cap (maxConnections)", {
          open: this.#connections.size,
        });
      }
      void writeAll(client, gateResponse(503, "too many open connections", 1))
        .catch(() => {})
        .finally(() => closeQuietly(client));
      return;
    }
    const connection = new Connection(client, this);
    this.#connections.set(connection.id, connection);
    connection.run().catch(() => connection.close());
  }
}
