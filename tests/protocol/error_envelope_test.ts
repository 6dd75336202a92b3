/** The error envelope module: which protocol a path is, the types per status, headers, redaction. */
import assert from "node:assert/strict";
import { secrets } from "../../src/base/redact.ts";
import {
  errorBody,
  errorReply,
  protocolOfPath,
  streamErrorFrame,
} from "../../src/protocol/error_envelope.ts";

Deno.test("error envelope: /v1/responses is OpenAI's; every other path is Anthropic's", () => {
  assert.equal(protocolOfPath("/v1/responses"), "responses");
  assert.equal(protocolOfPath("/v1/responses/resp_1"), "responses");
  for (const path of ["/v1/messages", "/v1/messages/count_tokens", "/v1/models", "/", "/x"]) {
    assert.equal(protocolOfPath(path), "messages", path);
  }
  assert.equal(protocolOfPath("/v1/responsesx"), "messages");
});

Deno.test("error envelope: each status has Anthropic's type, and OpenAI's type and code", () => {
  const table: [number, string, string, string | null][] = [
    [400, "invalid_request_error", "invalid_request_error", null],
    [401, "authentication_error", "authentication_error", "invalid_api_key"],
    [403, "permission_error", "permission_error", null],
    [404, "not_found_error", "not_found_error", null],
    [408, "invalid_request_error", "invalid_request_error", null],
    [413, "request_too_large", "invalid_request_error", "request_too_large"],
    [426, "invalid_request_error", "invalid_request_error", null],
    [429, "rate_limit_error", "rate_limit_error", "rate_limit_exceeded"],
    [500, "api_error", "server_error", "server_error"],
    [502, "api_error", "server_error", "server_error"],
    [503, "overloaded_error", "server_error", "server_error"],
    [529, "overloaded_error", "server_error", "server_error"],
  ];
  for (const [status, anthropic, openai, code] of table) {
    assert.deepEqual(errorBody("messages", status, "m"), {
      type: "error",
      error: { type: anthropic, message: "m" },
    }, `${status}`);
    assert.deepEqual(errorBody("responses", status, "m"), {
      type: "error",
      error: { message: "m", type: openai, param: null, code },
    }, `${status}`);
    assert.deepEqual(errorBody("unknown", status, "m"), {
      type: "error",
      error: { type: anthropic, message: "m", param: null, code: null },
    }, `${status}`);
  }
});

Deno.test("error envelope: param and code given replace the status's; Anthropic's shape has neither", () => {
  const options = { param: "input", code: "invalid_value" };
  assert.deepEqual(errorBody("responses", 400, "bad", options).error, {
    message: "bad",
    type: "invalid_request_error",
    param: "input",
    code: "invalid_value",
  });
  assert.equal(errorBody("responses", 413, "big", { code: null }).error.code, null);
  assert.deepEqual(errorBody("messages", 400, "bad", options), {
    type: "error",
    error: { type: "invalid_request_error", message: "bad" },
  });
});

Deno.test("error envelope: a reply has the status, JSON, and retry-after only when asked", async () => {
  const busy = errorReply("responses", 429, "busy", { retryAfterSec: 2.2 });
  assert.equal(busy.status, 429);
  assert.match(busy.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(busy.headers.get("retry-after"), "3", "whole seconds, rounded up");
  assert.equal((await busy.json()).error.code, "rate_limit_exceeded");
  const plain = errorReply("messages", 404, "nope");
  assert.equal(plain.headers.get("retry-after"), null);
  assert.deepEqual(await plain.json(), {
    type: "error",
    error: { type: "not_found_error", message: "nope" },
  });
});

Deno.test("error envelope: messages are redacted in every shape and in the stream's error event", () => {
  const secret = "envelope-Secret-7781";
  secrets.add(secret);
  const message = `failed with ${secret}`;
  for (const protocol of ["messages", "responses", "unknown"] as const) {
    const body = JSON.stringify(errorBody(protocol, 500, message));
    assert.ok(!body.includes(secret), body);
    assert.match(body, /failed with \*\*\*/);
  }
  const frame = streamErrorFrame(message);
  assert.equal(frame.event, "error");
  assert.deepEqual(frame.data, {
    type: "error",
    error: { type: "api_error", message: "failed with ***" },
  });
});
