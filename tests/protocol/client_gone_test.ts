import assert from "node:assert/strict";
import { withLogs } from "../support/captured_logs.ts";
import { deps, ScriptedTurn, testApp } from "../support/scripted_turns.ts";

const ROUTES = [
  { path: "/v1/messages", body: { model: "m", messages: [{ role: "user", content: "x" }] } },
  { path: "/v1/responses", body: { model: "m", input: "x" } },
];

function jsonRequest(path: string, body: unknown, signal?: AbortSignal): Request {
  return new Request(`http://gateway${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

for (const { path, body } of ROUTES) {
  Deno.test(`${path} JSON reply: a client gone mid-turn is logged at info, no error`, async () => {
    await withLogs(async (records) => {
      const turn = new ScriptedTurn();
      const controller = new AbortController();
      const pending = testApp(deps(turn.runTurn)).request(
        jsonRequest(path, body, controller.signal),
      );
      await turn.called;
      controller.abort();
      await pending;
      await turn.finished;
      assert.deepEqual(records.filter((r) => r.level === "error" || r.level === "fatal"), []);
      const gone = records.filter((r) => r.level === "info" && /went away/.test(String(r.message)));
      assert.equal(gone.length, 1, JSON.stringify(records.map((r) => r.message)));
    });
  });

  Deno.test(`${path} JSON reply: a turn that fails with the client still there is an error`, async () => {
    await withLogs(async (records) => {
      const turn = new ScriptedTurn();
      const pending = testApp(deps(turn.runTurn)).request(jsonRequest(path, body));
      await turn.called;
      turn.end(); // no `done`: a council defect, not a disconnect
      const response = await pending;
      assert.equal(response.status, 500);
      await response.body?.cancel();
      assert.equal(records.filter((r) => r.level === "error").length, 1);
      assert.ok(!records.some((r) => /went away/.test(String(r.message))));
    });
  });
}
