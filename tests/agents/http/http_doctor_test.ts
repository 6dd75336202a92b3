/**
 * `doctor` on HTTP agents, against local stubs: reachable and model listed; model not listed;
 * key missing or refused; endpoint down or silent; an endpoint that cannot list models.
 */
import assert from "node:assert/strict";
import type { ConfigFile } from "../../../src/config/mod.ts";
import { configOf } from "../../support/test_config.ts";
import { listsModel, runDoctor } from "../../../src/cli/doctor.ts";
import { closedPort, jsonResponse, startStub } from "../../support/model_api_stub.ts";

function doctorConfig(agents: Record<string, unknown>[], file: Record<string, unknown> = {}) {
  return configOf({ port: 0, defaultAgents: agents, ...file } as ConfigFile);
}

const env = (vars: Record<string, string>) => (name: string) => vars[name];

/** The agent table's row for `name`, cells split on runs of 2+ spaces. */
function row(text: string, name: string): string[] {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  assert.ok(line, `no row for ${name} in:\n${text}`);
  return line.split(/\s{2,}/);
}

const MODELS = {
  data: [
    { type: "model", id: "claude-sonnet-4-5-20250929" },
    { type: "model", id: "claude-haiku-4-5-20251001" },
  ],
  has_more: false,
};

Deno.test("doctor: an anthropic endpoint that lists the model (by alias) is ok; key and version sent", async () => {
  await using stub = startStub(() => jsonResponse(200, MODELS));
  const config = doctorConfig([{
    runner: "anthropic",
    model: "claude-sonnet-4-5",
    baseUrl: stub.origin,
  }]);
  const report = await runDoctor(config, env({ ANTHROPIC_API_KEY: "sk-ant-doc" }));
  assert.deepEqual(report.problems, []);
  assert.deepEqual(row(report.text, "anthropic"), [
    "anthropic",
    "anthropic",
    "claude-sonnet-4-5",
    stub.origin,
    "2 models",
    "ok",
  ]);
  const [request] = stub.requests;
  assert.equal(request.method, "GET");
  assert.equal(request.path, "/v1/models");
  assert.equal(request.headers.get("x-api-key"), "sk-ant-doc");
  assert.equal(request.headers.get("anthropic-version"), "2023-06-01");
  assert.doesNotMatch(report.text, /sk-ant-doc/, "the key is never printed");
});

Deno.test("doctor: a model the endpoint does not list is a problem", async () => {
  await using stub = startStub(() =>
    jsonResponse(200, { object: "list", data: [{ id: "llama3.1:latest" }, { id: "qwen2.5:7b" }] })
  );
  const config = doctorConfig([
    { name: "ok", runner: "openai", model: "llama3.1", baseUrl: `${stub.origin}/v1` },
    { name: "typo", runner: "openai", model: "lama3.1", baseUrl: `${stub.origin}/v1` },
  ]);
  const report = await runDoctor(config, env({}));
  assert.equal(row(report.text, "ok").at(-1), "ok", "llama3.1 is listed as llama3.1:latest");
  assert.equal(stub.requests[0].path, "/v1/models");
  assert.equal(stub.requests[0].headers.get("authorization"), null, "no key, no header");
  assert.deepEqual(report.problems, [
    'typo: model "lama3.1" not listed by the endpoint (e.g. llama3.1:latest, qwen2.5:7b)',
  ]);
});

Deno.test("doctor: a missing or refused key is a problem", async () => {
  await using stub = startStub((request) =>
    request.headers.get("x-api-key") === "good" ? jsonResponse(200, MODELS) : jsonResponse(401, {
      type: "error",
      error: { type: "authentication_error", message: "invalid x-api-key" },
    })
  );
  const config = doctorConfig([
    { runner: "anthropic", model: "claude-haiku-4-5", baseUrl: stub.origin },
  ]);
  assert.deepEqual((await runDoctor(config, env({}))).problems, [
    "anthropic: HTTP 401: ANTHROPIC_API_KEY is not set",
  ]);
  assert.deepEqual((await runDoctor(config, env({ ANTHROPIC_API_KEY: "bad" }))).problems, [
    "anthropic: HTTP 401: authentication_error: invalid x-api-key",
  ]);
  assert.deepEqual((await runDoctor(config, env({ ANTHROPIC_API_KEY: "good" }))).problems, []);
});

Deno.test("doctor: an endpoint that is down or silent is unreachable; one without a list is ok", async () => {
  const port = closedPort();
  let release!: () => void;
  const silent = new Promise<void>((resolve) => (release = resolve));
  await using hanging = startStub(async () => {
    await silent;
    return jsonResponse(200, { data: [] });
  });
  await using noList = startStub(() => jsonResponse(404, { detail: "Not Found" }));
  const config = doctorConfig([
    { name: "down", runner: "openai", model: "m", baseUrl: `http://127.0.0.1:${port}/v1` },
    { name: "silent", runner: "openai", model: "m", baseUrl: hanging.origin },
    { name: "nolist", runner: "openai", model: "m", baseUrl: noList.origin },
  ]);
  const report = await runDoctor(config, env({}), 200);
  release();
  assert.deepEqual(report.problems, [
    "down: unreachable: connection refused",
    "silent: unreachable: no answer within 200 ms",
  ]);
  assert.equal(row(report.text, "nolist").at(-1), "ok (reachable; no model list: HTTP 404)");
});

Deno.test("doctor: an HTTP judge is checked against agent 0's endpoint it inherits", async () => {
  await using stub = startStub(() => jsonResponse(200, MODELS));
  const config = doctorConfig(
    [{ runner: "anthropic", model: "claude-sonnet-4-5", baseUrl: stub.origin }],
    { judge: { runner: "anthropic" } },
  );
  const report = await runDoctor(config, env({ ANTHROPIC_API_KEY: "k" }));
  assert.deepEqual(report.problems, []);
  assert.deepEqual(row(report.text, "judge").slice(0, 4), [
    "judge",
    "anthropic",
    "claude-haiku-4-5",
    stub.origin,
  ]);
});

Deno.test("doctor: model ids match exactly, as an alias of a dated id, or as name:latest", () => {
  const ids = ["claude-opus-4-8-20260101", "llama3.1:latest", "gpt-5-mini"];
  assert.ok(listsModel(ids, "claude-opus-4-8"));
  assert.ok(listsModel(ids, "llama3.1"));
  assert.ok(listsModel(ids, "gpt-5-mini"));
  assert.ok(!listsModel(ids, "gpt-5"), "gpt-5 is not gpt-5-mini");
  assert.ok(!listsModel(ids, "claude-opus"));
});
