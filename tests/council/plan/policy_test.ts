import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { EXHAUSTIVENESS_DIRECTIVE } from "../../../src/council/prompt/prompts.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  type FakeReply,
  READ_TOOL,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";

const ANSWERS: Record<string, FakeReply> = {
  "*:child": { text: "candidate" },
  "*:synth": { text: "final" },
};

async function runWith(
  file: Parameters<typeof testConfig>[0],
  request: Parameters<typeof testRequest>[0],
  extra: Record<string, FakeReply> = {},
) {
  const fake = fakeAgents(byAgent({ ...ANSWERS, ...extra }));
  const { runTurn } = createCouncil({
    config: testConfig(file),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
  });
  const log = await collect(runTurn(testRequest(request), new AbortController().signal));
  const children = fake.calls.filter((c) => c.role === "child");
  const judge = fake.calls.filter((c) => c.role === "judge");
  return { fake, log, children, judge };
}

Deno.test("background: haiku → exactly one child, the claude agent, pinned to the exact model, no directive", async () => {
  const { fake, children } = await runWith(
    {
      fanOutPolicy: "always",
      defaultAgents: [{ runner: "codex", model: "gpt-5.5" }, { runner: "claude", model: "opus" }],
    },
    { model: "claude-haiku-4-5-20251001", ask: "Write a title for this conversation" },
  );
  assert.equal(fake.calls.length, 1);
  assert.equal(children.length, 1);
  assert.equal(children[0].agent.runner, "claude");
  assert.equal(children[0].model, "claude-haiku-4-5-20251001");
  assert.equal(children[0].options.model, "claude-haiku-4-5-20251001");
  assert.ok(!children[0].prompt.includes(EXHAUSTIVENESS_DIRECTIVE));
});

Deno.test("background: small/fast names pick the family's runner, else agent 0; case-insensitive", async () => {
  const cases: [string, string][] = [
    ["gpt-5-FAST", "codex"],
    ["gemini-small-001", "gemini"],
    ["my-small-model", "claude"],
  ];
  for (const [model, runner] of cases) {
    const { fake } = await runWith({ fanOutPolicy: "always" }, { model });
    assert.equal(fake.calls.length, 1, model);
    assert.equal(fake.calls[0].agent.runner, runner, model);
    assert.equal(fake.calls[0].model, model);
  }
});

Deno.test("background with tools: one child proposes an action without the directive", async () => {
  const { fake, log } = await runWith(
    { fanOutPolicy: "always" },
    { model: "claude-haiku-4-5", tools: [READ_TOOL] },
    { "claude:child": { text: '{"kind":"tool","name":"Read","input":{"file_path":"/x"}}' } },
  );
  assert.equal(fake.calls.length, 1);
  assert.ok(!fake.calls[0].prompt.includes(EXHAUSTIVENESS_DIRECTIVE));
  assert.equal(log.outcome.kind, "tool");
});

Deno.test("policy never: one child (agent 0), no judge", async () => {
  const { children, judge, log } = await runWith({ fanOutPolicy: "never" }, {});
  assert.deepEqual(children.map((c) => c.agent.name), ["claude"]);
  assert.equal(judge.length, 0);
  assert.ok(log.progress.includes("consulting one agent: claude — fanOutPolicy never"));
});

Deno.test("policy always: fans out even a greeting, no judge", async () => {
  const { children, judge } = await runWith({ fanOutPolicy: "always" }, { ask: "hi" });
  assert.equal(children.length, 3);
  assert.equal(judge.length, 0);
});

Deno.test("policy auto: the heuristic short-circuits trivial asks without a judge call", async () => {
  for (const ask of ["thanks!", "Hello there", "ok", "yes please", "what time"]) {
    const { children, judge, log } = await runWith({ fanOutPolicy: "auto" }, { ask });
    assert.equal(judge.length, 0, ask);
    assert.equal(children.length, 1, ask);
    assert.ok(log.progress.some((l) => l.endsWith("trivially simple ask")), ask);
  }
});

Deno.test("policy auto: judge yes → fan out, with its reason in progress", async () => {
  const { children, judge, log } = await runWith(
    { fanOutPolicy: "auto" },
    { ask: "Design a caching layer for the API client" },
    { "*:judge": { text: '{"fanOut": true, "reason": "open design question"}' } },
  );
  assert.equal(judge.length, 1);
  assert.equal(judge[0].agent.runner, "claude");
  assert.equal(judge[0].model, "haiku", "agent 0's family, cheap model");
  assert.ok(judge[0].prompt.includes("Design a caching layer"));
  assert.equal(children.length, 3);
  assert.ok(
    log.progress.includes(
      "consulting 3 agents: claude, codex, gemini — judge: open design question",
    ),
  );
});

Deno.test("policy auto: judge no → single", async () => {
  const { children, log } = await runWith(
    { fanOutPolicy: "auto" },
    { ask: "Rename variable foo to bar in utils.ts" },
    { "*:judge": { text: '```json\n{"fanOut": false, "reason": "mechanical edit"}\n```' } },
  );
  assert.equal(children.length, 1);
  assert.ok(log.progress.includes("consulting one agent: claude — judge: mechanical edit"));
});

Deno.test("policy auto: garbage or failing judge → single", async () => {
  for (
    const reply of [{ text: "Yes, definitely fan out!" }, { ok: false, error: "judge: exit 1" }]
  ) {
    const { children, judge, log } = await runWith(
      { fanOutPolicy: "auto" },
      { ask: "Design a caching layer for the API client" },
      { "*:judge": reply },
    );
    assert.equal(judge.length, 1);
    assert.equal(children.length, 1);
    assert.ok(
      log.progress.some((l) => /judge (reply unparseable|failed)/.test(l)),
      JSON.stringify(log.progress),
    );
  }
});

Deno.test("policy necessary: always asks the judge, with a high bar", async () => {
  const { judge, children } = await runWith(
    { fanOutPolicy: "necessary" },
    { ask: "thanks" },
    { "*:judge": { text: '{"fanOut": false, "reason": "small talk"}' } },
  );
  assert.equal(judge.length, 1);
  assert.match(judge[0].prompt, /high bar/);
  assert.equal(children.length, 1);
});

Deno.test("judge config: its fields override the defaults", async () => {
  const { judge } = await runWith(
    {
      fanOutPolicy: "necessary",
      judge: { runner: "codex", model: "gpt-5-mini", env: { J: "1" } },
    },
    {},
    { "*:judge": { text: '{"fanOut": true, "reason": "r"}' } },
  );
  assert.equal(judge[0].agent.runner, "codex");
  assert.equal(judge[0].model, "gpt-5-mini");
  assert.deepEqual(judge[0].agent.env, { J: "1" });
});

Deno.test("scope first-turn: a continuation runs agent 0 alone; every-turn applies the policy", async () => {
  const transcript = [
    { kind: "user" as const, text: "Read notes.txt" },
    { kind: "tool_call" as const, id: "t1", name: "Read", input: { file_path: "/n" } },
    { kind: "tool_result" as const, id: "t1", text: "notes", isError: false },
  ];
  const first = await runWith(
    { fanOutPolicy: "always", fanOutScope: "first-turn" },
    { continuation: true, transcript },
  );
  assert.deepEqual(first.children.map((c) => c.agent.name), ["claude"]);
  assert.ok(first.log.progress.some((l) => l.includes("tool-loop continuation")));
  const every = await runWith(
    { fanOutPolicy: "always", fanOutScope: "every-turn" },
    { continuation: true, transcript },
  );
  assert.equal(every.children.length, 3);
  const fresh = await runWith({ fanOutPolicy: "always", fanOutScope: "first-turn" }, {});
  assert.equal(fresh.children.length, 3, "the next substantive request fans out again");
});

Deno.test("no agents configured → an explanatory answer, no calls", async () => {
  const fake = fakeAgents(() => ({ text: "x" }));
  const config = { ...testConfig(), defaultAgents: [] };
  const { runTurn } = createCouncil({ config, runAgent: fake.runAgent, clock: new FakeClock() });
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.equal(fake.calls.length, 0);
  assert.match(log.outcome.kind === "answer" ? log.outcome.text : "", /no agents configured/);
});
