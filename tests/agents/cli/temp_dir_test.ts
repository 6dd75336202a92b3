/** A child without a given cwd works in its own temp dir, removed after it whether empty or not. */
import assert from "node:assert/strict";
import { fakeAgent } from "../../fixtures/fakes.ts";
import { testRunner } from "../../support/agent_runner.ts";

for (const leaves of ["nothing", "files and a folder"] as const) {
  Deno.test(`temp dir: removed after a child that leaves ${leaves} in it`, async () => {
    const script = leaves === "nothing"
      ? "pwd"
      : "mkdir -p sub/deeper && echo x > sub/deeper/f && echo y > g && pwd";
    const agent = fakeAgent("command", {}, { command: "sh", args: ["-c", script] });
    const result = await testRunner()(agent, "hi", { role: "child" });
    assert.equal(result.ok, true, result.error);
    const cwd = result.text.trim();
    assert.match(cwd, /council-child-/);
    await assert.rejects(Deno.stat(cwd), Deno.errors.NotFound, `${cwd} is still there`);
  });
}
