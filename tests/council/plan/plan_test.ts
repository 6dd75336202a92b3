import assert from "node:assert/strict";
import {
  agentIndexForModel,
  assignChildren,
  isBackgroundModel,
  isTrivialAsk,
  JUDGE_TIMEOUT_MS,
  judgeAgent,
  modelFamily,
} from "../../../src/council/plan/plan.ts";
import { testConfig } from "../../support/scripted_agents.ts";

Deno.test("background models: haiku, small, fast in any case", () => {
  for (const m of ["claude-haiku-4-5-20251001", "HAIKU", "gpt-small", "some-Fast-model"]) {
    assert.ok(isBackgroundModel(m), m);
  }
  for (const m of ["claude-opus-4-8", "gpt-5.5", "gemini-2.5-flash", "svc-council"]) {
    assert.ok(!isBackgroundModel(m), m);
  }
});

Deno.test("model families map to runners; unknown → agent 0", () => {
  assert.equal(modelFamily("claude-sonnet-5"), "claude");
  assert.equal(modelFamily("haiku"), "claude");
  assert.equal(modelFamily("gpt-5.5-fast"), "codex");
  assert.equal(modelFamily("o4-mini"), "codex");
  assert.equal(modelFamily("gemini-2.5-flash"), "gemini");
  assert.equal(modelFamily("my-model"), undefined);
  const agents = testConfig().defaultAgents;
  assert.equal(agentIndexForModel(agents, "gemini-fast"), 2);
  assert.equal(agentIndexForModel(agents, "o3-small"), 1);
  assert.equal(agentIndexForModel(agents, "my-small-model"), 0);
  assert.equal(agentIndexForModel([agents[1]], "claude-haiku"), 0, "no claude agent → agent 0");
});

Deno.test("heuristic: greetings, thanks, confirmations and tiny code-free asks are trivial", () => {
  for (
    const ask of ["hi", "Thanks!", "thank you so much.", "ok", "LGTM", "go ahead", "what time", ""]
  ) {
    assert.ok(isTrivialAsk(ask), ask);
  }
  for (
    const ask of [
      "fix the bug",
      "why?",
      "read `a.ts`",
      "look at main.ts",
      "Refactor the parser module to remove duplication",
      "hi, can you review my pull request and check the error handling?",
    ]
  ) {
    assert.ok(!isTrivialAsk(ask), ask);
  }
});

Deno.test("round-robin assignment: child 0 = agent 0, repeated agents get #n labels", () => {
  const agents = testConfig().defaultAgents;
  const children = assignChildren(agents, 5);
  assert.deepEqual(children.map((c) => c.agentIndex), [0, 1, 2, 0, 1]);
  assert.deepEqual(children.map((c) => c.label), [
    "claude",
    "codex",
    "gemini",
    "claude#2",
    "codex#2",
  ]);
  assert.ok(children.every((c) => c.directive && c.model === undefined));
});

Deno.test("judge agent: agent 0's runner, command, args and env with its family's cheap model", () => {
  const config = testConfig({
    defaultAgents: [
      { runner: "claude", model: "opus", command: "/opt/claude", args: ["--x"], env: { A: "1" } },
      { runner: "codex", model: "gpt-5.5" },
    ],
  });
  const judge = judgeAgent(config.defaultAgents, config.judge);
  assert.deepEqual(judge, {
    name: "judge",
    runner: "claude",
    model: "haiku",
    command: "/opt/claude",
    args: ["--x"],
    env: { A: "1" },
    timeoutMs: JUDGE_TIMEOUT_MS,
  });
  const custom = testConfig({
    defaultAgents: [{ runner: "claude", model: "opus", env: { A: "1" } }],
    judge: { runner: "gemini", timeoutMs: 5000, env: { B: "2" } },
  });
  assert.deepEqual(judgeAgent(custom.defaultAgents, custom.judge), {
    name: "judge",
    runner: "gemini",
    model: "gemini-2.5-flash-lite",
    args: [],
    env: { B: "2" },
    timeoutMs: 5000,
  });
});
