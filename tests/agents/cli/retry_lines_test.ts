/**
 * Upstream retries as each real CLI prints them become `retry` items: claude's stream-json
 * `api_retry` events, codex's `Reconnecting... n/m` error lines, gemini's `Attempt n failed`
 * lines on stderr. The lines below are written in the recorded formats (claude 2.1.197 and
 * 2.1.330, codex 0.169.0, gemini 0.61.0) with texts of our own. The runner passes them on as
 * `retry` events from real (fake) processes.
 */
import assert from "node:assert/strict";
import { createClaudeParser } from "../../../src/agents/cli/claude.ts";
import { createCodexParser } from "../../../src/agents/cli/codex.ts";
import { parseGeminiStderr } from "../../../src/agents/cli/gemini.ts";
import type { ParsedLine } from "../../../src/agents/types.ts";
import { fakeAgent } from "../../fixtures/fakes.ts";
import { EventLog, testRunner } from "../../support/agent_runner.ts";

const retries = (parsed: ParsedLine[]) => parsed.filter((p) => p.type === "retry");

Deno.test("claude: api_retry system events are retries (2.1.197 and 2.1.330 shapes)", () => {
  const parse = createClaudeParser();
  const lines = [
    // 2.1.197: two retries at most, a fractional delay.
    {
      type: "system",
      subtype: "api_retry",
      attempt: 1,
      max_retries: 2,
      retry_delay_ms: 512.25,
      error_status: 529,
      error: "overloaded",
      session_id: "s-1",
      uuid: "u-1",
    },
    // 2.1.330: ten retries, whole milliseconds; a 500 this time.
    {
      type: "system",
      subtype: "api_retry",
      attempt: 4,
      max_retries: 10,
      retry_delay_ms: 4100,
      error_status: 500,
      error: "api_error",
      session_id: "s-1",
      uuid: "u-2",
    },
    { type: "system", subtype: "status", status: "requesting", session_id: "s-1", uuid: "u-3" },
  ];
  const parsed = lines.flatMap((line) => parse(JSON.stringify(line)));
  assert.deepEqual(retries(parsed), [
    { type: "retry", attempt: 1, maxAttempts: 2, reason: "529 overloaded" },
    { type: "retry", attempt: 4, maxAttempts: 10, reason: "500 api_error" },
  ]);
  assert.equal(parsed.length, 2, "the status event is not a retry");
});

Deno.test("codex: top-level Reconnecting errors are retries; other errors are not", () => {
  const parse = createCodexParser();
  const lines = [
    { type: "thread.started", thread_id: "t-1" },
    { type: "turn.started" },
    // After HTTP 5xx (codex-http500).
    { type: "error", message: "Reconnecting... 1/5 (Upstream is having a rough day, hold on.)" },
    // After a stream that ended without response.completed (codex-no_completed).
    {
      type: "error",
      message: "Reconnecting... 2/5 (stream disconnected before completion: closed early)",
    },
    { type: "item.completed", item: { id: "item_1", type: "error", message: "not a retry" } },
    { type: "error", message: "Upstream is having a rough day, hold on." },
    { type: "turn.failed", error: { message: "Upstream is having a rough day, hold on." } },
  ];
  const parsed = lines.flatMap((line) => parse(JSON.stringify(line)));
  assert.deepEqual(retries(parsed), [
    {
      type: "retry",
      attempt: 1,
      maxAttempts: 5,
      reason: "Upstream is having a rough day, hold on.",
    },
    {
      type: "retry",
      attempt: 2,
      maxAttempts: 5,
      reason: "stream disconnected before completion: closed early",
    },
  ]);
});

Deno.test("gemini: 'Attempt n failed … Retrying' stderr lines are retries; the stack is not", () => {
  const stderr = [
    "YOLO mode is enabled. All tool calls will be automatically approved.",
    'Attempt 1 failed with status 503. Retrying with backoff... _ApiError: {"error":{"code":503,' +
    '"message":"Our model is resting.","status":"UNAVAILABLE"}}',
    "    at throwErrorIfNotOK (file:///opt/gemini/bundle/chunk.js:10:24)",
    "    at async retryWithBackoff (file:///opt/gemini/bundle/chunk.js:20:23) {",
    "  status: 503",
    "}",
    "Attempt 2 failed with 5xx error. Retrying with backoff... Error: got 502 from upstream",
    "Attempt 3 failed with 429 error (no Retry-After header). Retrying with backoff... Error: 429",
    "Attempt 4 failed: Quota will reset soon. Retrying after 5210ms...",
    "Attempt 5 failed. Retrying with backoff... TypeError: fetch failed",
    "Attempt 10 failed: Our model is resting. Max attempts reached",
  ];
  assert.deepEqual(stderr.flatMap(parseGeminiStderr), [
    { type: "retry", attempt: 1, reason: "503" },
    { type: "retry", attempt: 2, reason: "5xx error" },
    { type: "retry", attempt: 3, reason: "429 error (no Retry-After header)" },
    { type: "retry", attempt: 4, reason: "Quota will reset soon" },
    { type: "retry", attempt: 5 },
  ]);
});

for (const runner of ["claude", "codex", "gemini"] as const) {
  Deno.test(`run: ${runner}'s retry notices arrive as retry events (stdout or stderr)`, async () => {
    const agent = fakeAgent(runner, { modes: ["retry-loop"], retries: 3, retryDelayMs: 1 });
    const events = new EventLog();
    const result = await testRunner()(agent, "hi", { role: "child", onEvent: events.onEvent });
    assert.equal(result.ok, true, result.error);
    assert.deepEqual(events.ofType("retry").map((r) => r.attempt), [1, 2, 3]);
    assert.ok(events.ofType("retry").every((r) => r.agent === agent.name && r.reason));
  });
}
