import assert from "node:assert/strict";
import { isPinnableModel, type PlanSettings, planTurn } from "../../../src/council/plan/plan.ts";
import { testConfig } from "../../support/scripted_agents.ts";

const settings: PlanSettings = testConfig();
const request = (model: string) => ({ model, continuation: false, ask: "summarise" });

Deno.test("pinnable model names: ordinary ids pass, shell syntax and spaces do not", () => {
  for (const m of ["haiku", "claude-haiku-4-5", "claude-3-5-haiku@20241022", "o4-mini-fast"]) {
    assert.ok(isPinnableModel(m), m);
  }
  for (const m of ["x", "a/b:c", "sonnet[1m]"]) assert.ok(isPinnableModel(m), m);
  const bad = ["haiku; rm -rf ~", "$(id)-haiku", "haiku`x`", "-haiku", "small model", "", "fast\n"];
  for (const m of bad) assert.ok(!isPinnableModel(m), JSON.stringify(m));
  assert.ok(!isPinnableModel(`haiku${"x".repeat(256)}`));
});

Deno.test("background: a safe model name is pinned on the single child", () => {
  const plan = planTurn(request("claude-haiku-4-5"), settings);
  assert.equal(plan.kind, "single");
  if (plan.kind !== "single") return;
  assert.equal(plan.child.model, "claude-haiku-4-5");
  assert.equal(plan.child.directive, false);
});

Deno.test("background: an unsafe model name is not pinned; the agent's own model runs", () => {
  const plan = planTurn(request("haiku; touch /tmp/pwned"), settings);
  assert.equal(plan.kind, "single");
  if (plan.kind !== "single") return;
  assert.equal(plan.child.model, undefined);
  assert.ok(!("model" in plan.child));
  assert.equal(plan.child.directive, false);
  assert.match(plan.reason, /background/);
  assert.match(plan.reason, /configured model/);
  assert.ok(!plan.reason.includes("touch"), plan.reason);
});
