/**
 * The baseline server: bare `Deno.serve` doing the least each endpoint needs (parse the JSON
 * body, answer a constant), so the gateway's figures can be read against what the runtime and
 * its HTTP stack cost alone. Run as a subprocess by the bench; prints its origin.
 */
const MODELS = JSON.stringify({
  data: [{ type: "model", id: "svc-council", display_name: "Council", created_at: "" }],
  has_more: false,
  first_id: "svc-council",
  last_id: "svc-council",
});
const JSON_HEADERS = { "content-type": "application/json" };
const encoder = new TextEncoder();
const MESSAGE_START = encoder.encode(
  `event: message_start\ndata: ${
    JSON.stringify({ type: "message_start", message: { id: "msg_baseline", content: [] } })
  }\n\n`,
);

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  const path = new URL(req.url).pathname;
  if (req.method === "GET" && path === "/v1/models") {
    return new Response(MODELS, { headers: JSON_HEADERS });
  }
  if (req.method === "POST" && path === "/v1/messages/count_tokens") {
    await req.json();
    return new Response('{"input_tokens":0}', { headers: JSON_HEADERS });
  }
  if (req.method === "POST" && path === "/v1/messages") {
    await req.json();
    // The first SSE frame at once, then the end: a time-to-first-byte floor.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(MESSAGE_START);
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }
  return new Response("not found", { status: 404 });
});
console.log(`listening on http://127.0.0.1:${server.addr.port}`);
await server.finished;
