/**
 * The HTTP/1.1 client against a raw TCP server that writes exactly the bytes a test wants:
 * keep-alive reuse and its limits, a stale pooled connection resent once, every body framing,
 * interim replies, cut replies, streaming per read, and cancellation.
 */
import assert from "node:assert/strict";
import { closeIdleConnections, h1Transport, h1TransportWith } from "../../src/agents/h1_client.ts";
import type { Upstream } from "../../src/agents/transport.ts";
import { withoutUserInfo } from "../../src/agents/http.ts";
import { within } from "./http_stub.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One request as the server read it. */
interface RawRequest {
  head: string;
  body: string;
}

/** A server connection: reads requests, writes raw bytes. */
class ServerConn {
  #pending = new Uint8Array(0);
  constructor(readonly conn: Deno.Conn) {}

  async #more(): Promise<boolean> {
    const buffer = new Uint8Array(65536);
    const n = await this.conn.read(buffer).catch(() => null);
    if (n === null) return false;
    const joined = new Uint8Array(this.#pending.length + n);
    joined.set(this.#pending);
    joined.set(buffer.subarray(0, n), this.#pending.length);
    this.#pending = joined;
    return true;
  }

  /** The next request, or undefined when the client closed the connection. */
  async request(): Promise<RawRequest | undefined> {
    for (;;) {
      const text = decoder.decode(this.#pending);
      const end = text.indexOf("\r\n\r\n");
      if (end !== -1) {
        const head = text.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        while (this.#pending.length < end + 4 + length) {
          if (!(await this.#more())) return undefined;
        }
        const body = decoder.decode(this.#pending.subarray(end + 4, end + 4 + length));
        this.#pending = this.#pending.slice(end + 4 + length);
        return { head, body };
      }
      if (!(await this.#more())) return undefined;
    }
  }

  async write(text: string): Promise<void> {
    const bytes = encoder.encode(text);
    let offset = 0;
    while (offset < bytes.length) offset += await this.conn.write(bytes.subarray(offset));
  }

  /** Resolves when the client closes its end. */
  async closedByClient(): Promise<void> {
    while (await this.#more()) { /* drain */ }
  }

  close(): void {
    try {
      this.conn.close();
    } catch { /* gone */ }
  }
}

/** A raw server on 127.0.0.1:0; `serve` runs once per accepted connection (numbered from 0). */
function rawServer(serve: (conn: ServerConn, index: number) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const handlers: Promise<void>[] = [];
  let connections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      const server = new ServerConn(conn);
      handlers.push(serve(server, connections++).catch(() => {}).finally(() => server.close()));
    }
  })();
  return {
    origin: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    get connections() {
      return connections;
    },
    async [Symbol.asyncDispose]() {
      closeIdleConnections();
      listener.close();
      await accepting.catch(() => {});
      await Promise.all(handlers);
    },
  };
}

let pools = 0;
/** Posts with a pool of its own (a test's connections never meet another test's). */
function post(url: string, init: { signal?: AbortSignal; poolKey?: string } = {}) {
  return h1Transport(url, {
    headers: { "content-type": "application/json" },
    body: '{"hello":"world"}',
    signal: init.signal ?? new AbortController().signal,
    poolKey: init.poolKey ?? `test-${++pools}`,
  });
}

/** The batches `pipe` hands on, as text. */
async function batches(upstream: Upstream): Promise<string[]> {
  const seen: string[] = [];
  await upstream.pipe((bytes) => seen.push(decoder.decode(bytes)));
  return seen;
}

const OK = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

Deno.test("h1 client: sends one POST with host, headers and body; keep-alive replies reuse the connection", async () => {
  const seen: RawRequest[] = [];
  await using server = rawServer(async (conn) => {
    for (let request; (request = await conn.request());) {
      seen.push(request);
      await conn.write(OK(`reply ${seen.length}`));
    }
  });
  const poolKey = "reuse";
  const first = await post(`${server.origin}/v1/messages?beta=true`, { poolKey });
  assert.equal(first.status, 200);
  assert.equal(first.statusText, "OK");
  assert.equal(first.headers.get("content-type"), "text/plain");
  assert.equal(await first.text(), "reply 1");
  const second = await post(`${server.origin}/v1/messages`, { poolKey });
  assert.deepEqual(await batches(second), ["reply 2"]);
  assert.equal(server.connections, 1);
  assert.match(seen[0].head, /^POST \/v1\/messages\?beta=true HTTP\/1\.1\r\n/);
  assert.match(seen[0].head, new RegExp(`\r\nhost: ${new URL(server.origin).host}\r\n`));
  assert.match(seen[0].head, /\r\ncontent-type: application\/json\r\n/);
  assert.equal(seen[0].body, '{"hello":"world"}');
});

Deno.test("h1 client: a pooled connection the server has closed is resent once on a new one", async () => {
  let requests = 0;
  await using server = rawServer(async (conn) => {
    await conn.request();
    requests++;
    // Keep-alive by the book, then gone: the next request on this connection meets a close.
    await conn.write(OK(`reply ${requests}`));
  });
  const poolKey = "stale";
  assert.equal(await (await post(server.origin, { poolKey })).text(), "reply 1");
  const again = await post(server.origin, { poolKey });
  assert.equal(await again.text(), "reply 2");
  assert.equal(server.connections, 2);
  assert.equal(requests, 2);
});

Deno.test("h1 client: a reply saying Connection: close, or with bytes after its end, is not reused", async () => {
  let served = 0;
  await using server = rawServer(async (conn) => {
    // This server would go on serving: only the client's own rule can open a second connection.
    while (await conn.request()) {
      served++;
      if (served === 1) await conn.write(OK("closing", "connection: close\r\n"));
      else if (served === 2) await conn.write(OK("extra") + "JUNK");
      else await conn.write(OK("fine"));
    }
  });
  const poolKey = "no-reuse";
  assert.equal(await (await post(server.origin, { poolKey })).text(), "closing");
  assert.equal(await (await post(server.origin, { poolKey })).text(), "extra");
  assert.equal(await (await post(server.origin, { poolKey })).text(), "fine");
  assert.equal(server.connections, 3);
});

Deno.test("h1 client: a close-delimited reply is read to the end and its connection not reused", async () => {
  await using server = rawServer(async (conn) => {
    await conn.request();
    await conn.write("HTTP/1.1 200 OK\r\n\r\nuntil the end");
  });
  const poolKey = "close-delimited";
  assert.deepEqual(await batches(await post(server.origin, { poolKey })), ["until the end"]);
  assert.deepEqual(await batches(await post(server.origin, { poolKey })), ["until the end"]);
  assert.equal(server.connections, 2);
});

Deno.test("h1 client: once a byte of the reply has come, a broken connection is an error, never a resend", async () => {
  let requests = 0;
  await using server = rawServer(async (conn) => {
    while (await conn.request()) {
      if (++requests === 1) await conn.write(OK("first"));
      else return await conn.write("HTTP/1.1 200 OK\r\n"); // and the connection closes
    }
  });
  const poolKey = "no-resend";
  assert.equal(await (await post(server.origin, { poolKey })).text(), "first");
  await assert.rejects(post(server.origin, { poolKey }), /connection closed inside the reply head/);
  assert.equal(requests, 2, "the second request was not sent again");
});

Deno.test("h1 client: user info in the URL becomes Basic credentials, unless authorization is set", async () => {
  const seen: string[] = [];
  await using server = rawServer(async (conn) => {
    for (let request; (request = await conn.request());) {
      seen.push(/\r\nauthorization: (.*)\r?\n?/i.exec(request.head)?.[1] ?? "none");
      await conn.write(OK("ok"));
    }
  });
  const url = new URL(server.origin);
  url.username = "user";
  url.password = "p@ss";
  await (await post(url.href)).text();
  const own = await h1Transport(url.href, {
    headers: { Authorization: "Bearer k" },
    body: "",
    signal: new AbortController().signal,
    poolKey: "own-auth",
  });
  await own.text();
  assert.deepEqual(seen, [`Basic ${btoa("user:p@ss")}`, "Bearer k"]);
});

Deno.test("h1 client: interim 1xx replies are skipped; a 204 has no body", async () => {
  let served = 0;
  await using server = rawServer(async (conn) => {
    while (await conn.request()) {
      if (served++ === 0) {
        await conn.write(
          "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n",
        );
        await conn.write(OK("final"));
      } else await conn.write("HTTP/1.1 204 No Content\r\n\r\n");
    }
  });
  const poolKey = "interim";
  const reply = await post(server.origin, { poolKey });
  assert.equal(reply.status, 200);
  assert.equal(reply.headers.get("link"), null);
  assert.equal(await reply.text(), "final");
  const empty = await post(server.origin, { poolKey });
  assert.equal(empty.status, 204);
  assert.deepEqual(await batches(empty), []);
});

Deno.test("h1 client: a chunked stream is handed on as it arrives, one batch per read", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await using server = rawServer(async (conn) => {
    await conn.request();
    await conn.write(
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
        "5\r\nfirst\r\n1\r\n \r\n",
    );
    await released;
    await conn.write("6\r\nsecond\r\n0\r\n\r\n");
  });
  const reply = await post(server.origin);
  const seen: string[] = [];
  await reply.pipe((bytes) => {
    seen.push(decoder.decode(bytes));
    if (seen.length === 1) release();
  });
  // The first batch came while the rest was not even sent: nothing waited for the end.
  assert.deepEqual(seen, ["first ", "second"]);
});

Deno.test("h1 client: replies cut short are errors, never a silent short body", async () => {
  await using server = rawServer(async (conn, index) => {
    await conn.request();
    if (index === 0) await conn.write("HTTP/1.1 200 OK\r\ncontent-le");
    if (index === 1) await conn.write("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc");
    if (index === 2) {
      await conn.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n");
    }
  });
  await assert.rejects(post(server.origin), /connection closed inside the reply head/);
  const short = await post(server.origin);
  await assert.rejects(batches(short), /connection closed before the body's end/);
  const chunked = await post(server.origin);
  await assert.rejects(batches(chunked), /connection closed before the body's end/);
});

Deno.test("h1 client: a server that closes without replying fails clearly on a new connection", async () => {
  await using server = rawServer(async (conn) => {
    await conn.request();
  });
  await assert.rejects(post(server.origin), /connection closed before the reply/);
});

Deno.test("h1 client: cancellation mid-body closes the connection and rejects as an abort", async () => {
  let gone!: () => void;
  const clientGone = new Promise<void>((resolve) => (gone = resolve));
  await using server = rawServer(async (conn) => {
    await conn.request();
    await conn.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n");
    await conn.closedByClient();
    gone();
  });
  const controller = new AbortController();
  const reply = await post(server.origin, { signal: controller.signal });
  const piping = reply.pipe(() => controller.abort());
  await assert.rejects(piping, (err: Error) => err.name === "AbortError");
  await within(clientGone, "the server to see the client go");
});

Deno.test("h1 client: cancellation while waiting for the reply's head closes the connection", async () => {
  let gone!: () => void;
  const clientGone = new Promise<void>((resolve) => (gone = resolve));
  const controller = new AbortController();
  await using server = rawServer(async (conn) => {
    await conn.request();
    controller.abort(); // the request has arrived; no reply will come
    await conn.closedByClient();
    gone();
  });
  await assert.rejects(post(server.origin, { signal: controller.signal }), {
    name: "AbortError",
  });
  await within(clientGone, "the server to see the client go");
});

Deno.test("h1 client: a signal aborted before the start sends nothing", async () => {
  await using server = rawServer(async (conn) => {
    await conn.request();
  });
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(post(server.origin, { signal: controller.signal }), {
    name: "AbortError",
  });
  assert.equal(server.connections, 0);
});

Deno.test("h1 client: https goes over TLS with certificate checks, and reuses the connection per origin", async () => {
  const dir = new URL("../fixtures/tls/", import.meta.url);
  const cert = await Deno.readTextFile(new URL("localhost.cert.pem", dir));
  const key = await Deno.readTextFile(new URL("localhost.key.pem", dir));
  const listener = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key });
  const port = (listener.addr as Deno.NetAddr).port;
  let connections = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      connections++;
      const server = new ServerConn(conn);
      (async () => {
        for (let request; (request = await server.request());) {
          await server.write(OK(`secure ${request.body}`));
        }
      })().catch(() => {}).finally(() => server.close());
    }
  })();
  try {
    const trusting = h1TransportWith({ caCerts: [cert] });
    const init = {
      headers: {},
      body: "x",
      signal: new AbortController().signal,
      poolKey: "tls",
    };
    for (const host of ["localhost", "127.0.0.1", "localhost"]) {
      const reply = await trusting(`https://${host}:${port}/v1/messages`, init);
      assert.equal(await reply.text(), "secure x");
    }
    assert.equal(connections, 2, "one connection per origin, reused");
    // The default roots do not know this certificate: refused, never sent in the clear.
    await assert.rejects(
      h1Transport(`https://localhost:${port}/v1/messages`, { ...init, poolKey: "untrusted" }),
      /certificate/i,
    );
  } finally {
    closeIdleConnections();
    listener.close();
    await serving.catch(() => {});
  }
});

Deno.test("h1 client: user info in a URL is never shown (logs and errors print the URL without it)", () => {
  assert.equal(withoutUserInfo("https://u:p%40ss@host:8443/v1?x=1"), "https://host:8443/v1?x=1");
  assert.equal(withoutUserInfo("http://localhost:11434/v1"), "http://localhost:11434/v1");
});
