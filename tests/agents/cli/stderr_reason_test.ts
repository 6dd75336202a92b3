import assert from "node:assert/strict";
import { tellingStderrLine } from "../../../src/agents/cli/stderr_reason.ts";

Deno.test("stderr reason: the line naming the problem wins over advice printed after it", () => {
  assert.equal(
    tellingStderrLine([
      "When using the model API, you must set the API key variable.",
      "Update your environment and try again!",
    ]),
    "When using the model API, you must set the API key variable.",
  );
});

Deno.test("stderr reason: a stack trace gives its message, not its last frame", () => {
  assert.equal(
    tellingStderrLine([
      "TypeError: cannot read properties of undefined",
      "    at main (/app/cli.js:10:5)",
      "    at run (/app/cli.js:3:1) failed",
    ]),
    "TypeError: cannot read properties of undefined",
  );
});

Deno.test("stderr reason: the last problem line, else the last line, else none", () => {
  assert.equal(
    tellingStderrLine(["warning: could not create aliases", "fatal: no config", "bye"]),
    "fatal: no config",
  );
  assert.equal(tellingStderrLine(["warming up", "boom: disk on fire"]), "boom: disk on fire");
  assert.equal(tellingStderrLine([]), undefined);
});
