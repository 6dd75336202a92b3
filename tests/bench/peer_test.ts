/** The peer comparison's pure parts: the raw client's body decoding, the stub's answer, figures. */
import assert from "node:assert/strict";
import { answerOf, BodyDecoder } from "../../scripts/bench/raw_client.ts";
import { added, peerRatio, routerConfig } from "../../scripts/bench/scenarios/peer.ts";
import {
  paceOf,
  STUB_ANSWER,
  STUB_TOKENS,
  stubToken,
  unstamped,
} from "../../scripts/bench/stub_upstream.ts";
import { summarize } from "../../scripts/bench/results.ts";
import { OPT_IN_SCENARIOS, SCENARIOS, selectScenarios } from "../../scripts/bench/main.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

Deno.test("BodyDecoder: chunked bodies split anywhere decode whole, and stop at their end", () => {
  const wire = "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\nHTTP/1.1 200 OK";
  for (let cut = 1; cut < wire.length; cut++) {
    const decoder = new BodyDecoder(true, NaN);
    const pieces: string[] = [];
    decoder.onPiece = (piece) => pieces.push(text(piece));
    const first = text(decoder.push(bytes(wire.slice(0, cut))));
    const rest = decoder.done
      ? first + wire.slice(cut)
      : text(decoder.push(bytes(wire.slice(cut))));
    assert.equal(decoder.done, true, `cut at ${cut}`);
    assert.equal(text(decoder.bytes), "hello, world");
    assert.equal(pieces.join(""), "hello, world");
    assert.equal(rest, "HTTP/1.1 200 OK", "what follows the body is left for the next response");
  }
});

Deno.test("BodyDecoder: a sized body ends at its length", () => {
  const decoder = new BodyDecoder(false, 5);
  assert.equal(text(decoder.push(bytes("helloNEXT"))), "NEXT");
  assert.equal(decoder.done, true);
  assert.equal(text(decoder.bytes), "hello");
});

Deno.test("answerOf joins the text deltas of an Anthropic stream", () => {
  const delta = (t: string) =>
    `event: content_block_delta\ndata: ${
      JSON.stringify({
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: t },
      })
    }\n\n`;
  const thinking = `event: content_block_delta\ndata: ${
    JSON.stringify({
      type: "content_block_delta",
      index: 0,
      delta: { type: "thinking_delta", thinking: "x" },
    })
  }\n\n`;
  assert.equal(answerOf(bytes(delta("a") + thinking + delta("b"))), "ab");
});

Deno.test("stub: 500 tokens, stamps removable, pace from flags", () => {
  assert.equal(STUB_ANSWER.split(" t").length - 1, STUB_TOKENS);
  assert.equal(stubToken(3, 1700000000123456), " t3@1700000000123456");
  assert.equal(unstamped(` t0@1 t1@22`), " t0 t1");
  assert.deepEqual(paceOf(["--gap-ms", "2", "--group", "10"]), { gapMs: 2, group: 10 });
  assert.deepEqual(paceOf([]), { gapMs: 0, group: 1 });
});

Deno.test("peer figures: added latency per percentile, and its ratio to the router's p50", () => {
  const direct = [1, 1, 1, 1, 1];
  const ours = added([2, 2, 2, 2, 3], direct);
  assert.equal(ours.p50, 1);
  const router = added([3, 3, 3, 3, 3], direct);
  assert.equal(router.p50, 2);
  assert.equal(peerRatio(ours, router), 0.5);
  assert.equal(peerRatio(router, ours), 2);
  assert.ok(Number.isNaN(peerRatio(added([], direct), router)), "nothing measured: no ratio");
  assert.equal(summarize([]).n, 0);
});

Deno.test("peer: the router routes everything to the stub, Anthropic format passed through", () => {
  const config = routerConfig("http://127.0.0.1:9", 4000) as {
    PORT: number;
    Providers: { api_base_url: string; transformer: unknown }[];
    Router: { default: string };
    LOG: boolean;
  };
  assert.equal(config.PORT, 4000);
  assert.equal(config.Providers[0].api_base_url, "http://127.0.0.1:9/v1/messages");
  assert.deepEqual(config.Providers[0].transformer, { use: ["Anthropic"] });
  assert.equal(config.Router.default, "stub,stub-model");
  assert.equal(config.LOG, false);
});

Deno.test("peer is opt-in: run only when named", () => {
  assert.ok(
    !selectScenarios(SCENARIOS, undefined, OPT_IN_SCENARIOS).some((s) => s.name === "peer"),
  );
  assert.deepEqual(
    selectScenarios(SCENARIOS, "peer", OPT_IN_SCENARIOS).map((s) => s.name),
    ["peer"],
  );
});
