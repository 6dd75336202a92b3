/** AgentHealth taking over a cool-down another replica of a team started. */
import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { AgentHealth } from "../../../src/council/calls/health.ts";

Deno.test("health: a cool-down another replica started is taken over until it ends", () => {
  const clock = new FakeClock();
  const health = new AgentHealth({ failures: 2, cooldownMs: 1000 }, clock);
  const until = clock.now() + 5000;
  health.adopt({ agent: "codex", state: "healthy", failuresInRow: 0 });
  assert.deepEqual(health.status(), [], "no cool-down, nothing to take over");
  health.adopt({
    agent: "codex",
    state: "cooling-down",
    failuresInRow: 3,
    lastError: "codex: 529",
    coolingUntil: until,
  });
  assert.deepEqual(health.coolingDown("codex"), {
    agent: "codex",
    state: "cooling-down",
    failuresInRow: 3,
    lastError: "codex: 529",
    coolingUntil: until,
  });
  health.adopt({
    agent: "codex",
    state: "cooling-down",
    failuresInRow: 1,
    coolingUntil: until - 1,
  });
  assert.equal(health.coolingDown("codex")?.coolingUntil, until, "a longer cool-down stays");
  clock.advance(5000);
  assert.equal(health.coolingDown("codex"), undefined, "it ends when the other replica's does");
});
