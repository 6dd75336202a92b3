/**
 * The latency bench's session: one session's growing requests, and a turn's start-up read from
 * the fake's records.
 */
import assert from "node:assert/strict";
import { sessionReport, sessionTurnBody, startUpOf } from "../../scripts/bench/latency/session.ts";
import { sessionKeyFor } from "../../src/council/session_key.ts";
import { messagesHints } from "../../src/protocol/messages/hints.ts";
import { descendantsOf } from "../../scripts/bench/latency/tree_memory.ts";
import type { RecordedRequest } from "../support/fake_vendor/mod.ts";

const call = (
  api: string,
  arrivedAt: number,
  prompt = "=== Your task ===",
) => ({ api, arrivedAt, prompt } as RecordedRequest);

Deno.test("latency session: every turn is the same host session, its transcript one exchange longer", async () => {
  const bodies = [0, 1, 2].map((i) => sessionTurnBody("s-1", i, "/work/project"));
  assert.deepEqual(bodies.map((b) => (b.messages as unknown[]).length), [1, 3, 5]);
  const keys = await Promise.all(bodies.map((body) =>
    sessionKeyFor({
      system: String(body.system),
      transcript: [],
      hints: messagesHints(new Headers(), body),
    })
  ));
  assert.equal(new Set(keys.map((k) => k.key)).size, 1);
  assert.equal(keys[0].source, "host");
  assert.match(String(bodies[0].system), /Primary working directory: \/work\/project/);
  const other = messagesHints(new Headers(), sessionTurnBody("s-2", 0, "/work/project"));
  assert.equal(other.sessionId, "s-2");
});

Deno.test("latency session: start-up runs to the last CLI child's first model call", () => {
  const calls = [
    call("models", 50),
    call("messages", 900),
    call("responses", 400),
    call("responses", 3000),
    call("gemini_count", 100),
    call("gemini", 1300),
    call("messages", 8000), // the synthesizer
  ];
  assert.equal(startUpOf(calls, 100), 1200);
  assert.equal(startUpOf(calls.filter((c) => c.api !== "gemini"), 100), 800, "gemini skipped");
  const synthOnly = [call("responses", 400), call("messages", 8000, "=== Candidate replies ===")];
  assert.equal(startUpOf(synthOnly, 100), 300, "claude skipped: the synthesizer is no child");
  assert.ok(Number.isNaN(startUpOf([call("models", 50)], 100)), "no child called");
});

Deno.test("latency session: the report's figures are the medians of turns 2 and later", () => {
  const pooled = [
    { wallMs: 20_000, startUpMs: 2_500 },
    { wallMs: 10_000, startUpMs: 300 },
    { wallMs: 10_000, startUpMs: 500 },
    { wallMs: 10_000, startUpMs: 400 },
  ];
  const cold = pooled.map((t) => ({ wallMs: t.wallMs + 2_000, startUpMs: 2_000 }));
  const { figures, table } = sessionReport(pooled, cold);
  assert.equal(figures[0].gateway, 4, "400 ms of 10 s");
  assert.equal(figures[0].target?.pass, true);
  assert.equal(figures[1].gateway, (2_000 / 12_000) * 100);
  assert.equal(figures[2].gateway, 10_000 / 12_000);
  assert.match(table, /\| 1 +\| 20000 ms/);
});

Deno.test("latency session: a process tree is its root and everything below it, nothing beside", () => {
  const table: [number, number][] = [[1, 0], [10, 1], [11, 10], [12, 10], [13, 12], [20, 1]];
  assert.deepEqual(descendantsOf(10, table).sort((a, b) => a - b), [10, 11, 12, 13]);
  assert.deepEqual(descendantsOf(99, table), [99]);
});
