/**
 * The synthesizer started ahead, over real child processes: on a fanned-out turn it is spawned
 * as the children start and given its prompt once the candidates are in; when synthesis is
 * skipped, goes to another agent, or the turn is cancelled, it is discarded and no process of it
 * is left.
 */
import assert from "node:assert/strict";
import { createAgentRunner } from "../../../src/agents/run.ts";
import type { AgentRunner, PreparedRun, PrepareOptions } from "../../../src/agents/types.ts";
import type { ConfigFile } from "../../../src/config/mod.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { isGone } from "../../support/agent_runner.ts";
import { tempDir } from "../../support/git_repos.ts";
import { fakeAgent, type FakeKnobs, readFakeLog } from "../../fixtures/fakes.ts";
import { eventually, within } from "../../support/wait.ts";
import {
  collect,
  READ_TOOL,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";

const runner = createAgentRunner({
  passApiKeys: false,
  selfOrigins: () => [],
  pricing: {},
  killGraceMs: 300,
});

/** The runner, recording what the council asks of it in order. */
function recordingRunner() {
  const steps: string[] = [];
  const prepared: PreparedRun[] = [];
  const prepareOptions: PrepareOptions[] = [];
  const runAgent: AgentRunner = Object.assign(
    (...[agent, prompt, options]: Parameters<AgentRunner>) => {
      steps.push(`run ${agent.name} ${options.role}`);
      return runner(agent, prompt, {
        ...options,
        onEvent: (event) => {
          if (event.type === "finished") steps.push(`finished ${agent.name} ${options.role}`);
          options.onEvent?.(event);
        },
      });
    },
    {
      prepare: async (...[agent, options]: Parameters<AgentRunner["prepare"]>) => {
        steps.push(`prepare ${agent.name} ${options.role}`);
        prepareOptions.push(options);
        const run = await runner.prepare(agent, options);
        prepared.push(run);
        return run;
      },
    },
  );
  return { runAgent, steps, prepared, prepareOptions };
}

async function councilOf(
  knobs: Record<"claude" | "codex" | "gemini", FakeKnobs>,
  file: ConfigFile = {},
) {
  const dir = await tempDir("early-synth-");
  const log = `${dir.path}/fakes.log`;
  const agents = (["claude", "codex", "gemini"] as const).map((name) =>
    fakeAgent(name, { log, ...knobs[name] }, { name })
  );
  const recorded = recordingRunner();
  const { runTurn } = createCouncil({
    config: { ...testConfig(file), defaultAgents: agents, councilSize: 3 },
    runAgent: recorded.runAgent,
  });
  const turn = (request = testRequest()) =>
    within(collect(runTurn(request, new AbortController().signal)), "the turn");
  // The turn has waited for its children, so nothing writes the log when the scope removes it.
  return {
    ...recorded,
    runTurn,
    turn,
    log,
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
  };
}

const SYNTHESIS = { match: "=== Candidate A ===", reply: "The synthesized answer." };

const read = (path: string) =>
  JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });

Deno.test("early synthesizer: started as the children start, it gets the prompt when the candidates are in", async () => {
  await using council = await councilOf({
    claude: {
      reply: "claude draft",
      chunkDelayMs: 20,
      rules: [SYNTHESIS],
    },
    codex: { reply: "codex draft" },
    gemini: { reply: "gemini draft", chunkDelayMs: 20 },
  });
  const { turn, steps, prepared, log } = council;
  const reply = await turn();
  assert.deepEqual(reply.outcome, { kind: "answer", text: "The synthesized answer." });
  const started = steps.indexOf("prepare claude synth");
  assert.ok(started >= 0, steps.join("\n"));
  assert.ok(
    steps.findIndex((s) => s.startsWith("finished") && s.endsWith("child")) > started,
    `started before any child finished:\n${steps.join("\n")}`,
  );
  assert.ok(!steps.includes("run claude synth"), "not started again when its turn came");
  const synth = (await readFakeLog(log)).find((c) => c.prompt.includes("=== Candidate A ==="));
  assert.equal(synth?.pid, prepared[0].pid, "the process started ahead wrote the answer");
  assert.ok(isGone(prepared[0].pid!));
});

Deno.test("early synthesizer: discarded unused when synthesis is skipped, nothing left", async () => {
  await using council = await councilOf(
    { claude: { reply: read("/a") }, codex: { reply: read("/a") }, gemini: { reply: read("/a") } },
    { quorum: { minAnswers: 0 } },
  );
  const { turn, steps, prepared, log } = council;
  const reply = await turn(testRequest({ tools: [READ_TOOL] }));
  assert.deepEqual(reply.outcome, { kind: "tool", name: "Read", input: { file_path: "/a" } });
  assert.ok(reply.progress.some((l) => l.startsWith("unanimous (3 agents)")));
  assert.ok(steps.includes("prepare claude synth"));
  assert.equal(prepared.length, 1);
  assert.ok(isGone(prepared[0].pid!), "the unused synthesizer's process is gone");
  const pids = (await readFakeLog(log)).map((c) => c.pid);
  assert.equal(pids.length, 3, "only the children were given a prompt");
  assert.ok(!pids.includes(prepared[0].pid!));
});

Deno.test("early synthesizer: when another agent synthesizes, the one started is discarded", async () => {
  await using council = await councilOf(
    {
      // claude's child is stuck retrying its upstream, so claude does not synthesize.
      claude: { modes: ["retry-loop"], retryDelayMs: 20 },
      codex: {
        reply: read("/a"),
        rules: [{ match: "Proposal 2 \\(made by", reply: '{"choose": 2}' }],
      },
      gemini: { reply: read("/b") },
    },
    { maxUpstreamRetries: 2 },
  );
  const { turn, steps, prepared } = council;
  const reply = await turn(testRequest({ tools: [READ_TOOL] }));
  assert.deepEqual(reply.outcome, { kind: "tool", name: "Read", input: { file_path: "/b" } });
  // claude is passed over once its child is cut, and codex is started ahead in its place.
  assert.ok(steps.includes("prepare codex synth"), steps.join("\n"));
  assert.ok(!steps.includes("run codex synth"), steps.join("\n"));
  assert.equal(prepared.length, 2);
  assert.ok(isGone(prepared[0].pid!), "claude's early synthesizer is gone");
});

Deno.test("early synthesizer: agent 0's child cut off retrying its upstream, the next agent is started ahead at once and synthesizes", async () => {
  await using council = await councilOf(
    {
      claude: { modes: ["retry-loop"], retryDelayMs: 20 },
      codex: { reply: "codex draft", rules: [SYNTHESIS] },
      // Still drafting well after claude's child is cut.
      gemini: { reply: "gemini draft", delayMs: 1500 },
    },
    { maxUpstreamRetries: 2 },
  );
  const { turn, steps, prepared, log } = council;
  const reply = await turn();
  assert.deepEqual(reply.outcome, { kind: "answer", text: "The synthesized answer." });
  assert.ok(steps.includes("prepare claude synth"), steps.join("\n"));
  const codexAhead = steps.indexOf("prepare codex synth");
  assert.ok(codexAhead >= 0, steps.join("\n"));
  assert.ok(
    codexAhead < steps.indexOf("finished gemini child"),
    `started while the children ran:\n${steps.join("\n")}`,
  );
  assert.ok(!steps.includes("run codex synth"), "not started again when its turn came");
  assert.ok(isGone(prepared[0].pid!), "claude's early synthesizer is gone");
  const synth = (await readFakeLog(log)).find((c) => c.prompt.includes("=== Candidate A ==="));
  assert.equal(synth?.pid, prepared.at(-1)!.pid, "the codex started ahead wrote the answer");
});

Deno.test("early synthesizer: a cancelled turn leaves no process of it", async () => {
  await using council = await councilOf({
    claude: { modes: ["hang"] },
    codex: { modes: ["hang"] },
    gemini: { modes: ["hang"] },
  });
  const { runTurn, prepared } = council;
  const controller = new AbortController();
  const watcher = new TurnWatcher(runTurn(testRequest(), controller.signal));
  await within(watcher.progressMatching(/^consulting 3 agents/), "the plan");
  await eventually(() => prepared.length === 1, "the synthesizer started ahead");
  controller.abort();
  await within(watcher.finished, "the cancelled turn");
  assert.ok(isGone(prepared[0].pid!));
});

Deno.test("early synthesizer: a turn cancelled while agent 0 retries its upstream starts no other", async () => {
  await using council = await councilOf(
    {
      claude: { modes: ["retry-loop"], retryDelayMs: 20 },
      codex: { modes: ["hang"] },
      gemini: { modes: ["hang"] },
    },
    { maxUpstreamRetries: 1000 },
  );
  const { runTurn, prepared, steps } = council;
  const controller = new AbortController();
  const watcher = new TurnWatcher(runTurn(testRequest(), controller.signal));
  await eventually(() => prepared.length === 1, "the synthesizer started ahead");
  await within(watcher.progressMatching(/claude.*retr/i), "claude's retries");
  controller.abort();
  await within(watcher.finished, "the cancelled turn");
  assert.ok(!steps.includes("prepare codex synth"), steps.join("\n"));
  assert.ok(isGone(prepared[0].pid!));
});

Deno.test("early synthesizer: a one-agent turn starts none", async () => {
  await using council = await councilOf(
    { claude: { reply: "alone" }, codex: {}, gemini: {} },
    { fanOutPolicy: "never" },
  );
  const { turn, steps } = council;
  const reply = await turn();
  assert.deepEqual(reply.outcome, { kind: "answer", text: "alone" });
  assert.ok(!steps.some((s) => s.startsWith("prepare")), steps.join("\n"));
});

Deno.test("early synthesizer: primed to wait for a late prompt, with the synthesizer's access and cwd", async () => {
  await using council = await councilOf(
    { claude: { reply: read("/a") }, codex: { reply: read("/a") }, gemini: { reply: read("/a") } },
    { quorum: { minAnswers: 0 } },
  );
  const { turn, prepareOptions, prepared } = council;
  await using cwdScope = await tempDir("early-synth-cwd-");
  const cwd = cwdScope.path;
  await turn(testRequest({ tools: [READ_TOOL], cwd }));
  assert.equal(prepareOptions.length, 1);
  const [options] = prepareOptions;
  assert.equal(options.role, "synth");
  assert.equal(options.holdStdin, true, "claude and gemini give up on a silent stdin otherwise");
  assert.equal(options.access, "read-only", "an action turn's synthesizer only looks");
  assert.equal(options.cwd, cwd);
  assert.ok(isGone(prepared[0].pid!));
});

Deno.test("early synthesizer: a `command` agent (it may act before reading a prompt) starts with its prompt", async () => {
  await using dir = await tempDir("early-synth-");
  const log = `${dir.path}/fakes.log`;
  const agents = [
    fakeAgent("command", { log, reply: "command draft", rules: [SYNTHESIS] }, { name: "cmd" }),
    fakeAgent("codex", { log, reply: "codex draft" }, { name: "codex" }),
  ];
  const { runAgent, steps } = recordingRunner();
  const { runTurn } = createCouncil({
    config: { ...testConfig(), defaultAgents: agents, councilSize: 2 },
    runAgent,
  });
  const reply = await within(collect(runTurn(testRequest(), new AbortController().signal)), "turn");
  assert.equal(
    reply.outcome.kind === "answer" && reply.outcome.text.trim(),
    "The synthesized answer.",
  );
  assert.ok(!steps.some((s) => s.startsWith("prepare")), steps.join("\n"));
  assert.ok(steps.includes("run cmd synth"));
});

Deno.test("early synthesizer: agent 0 failing since its last call, the next agent is started and used", async () => {
  await using council = await councilOf(
    {
      // Turn 1: claude fails as a child and as the synthesizer; turn 2: its child hangs.
      claude: {
        rules: [
          { match: "FIRST TURN", mode: "error" },
          { match: "SECOND TURN", mode: "hang" },
        ],
      },
      codex: { reply: "codex draft", rules: [SYNTHESIS] },
      gemini: { reply: "gemini draft" },
    },
    { health: { failures: 5, cooldownMs: 60_000 } },
  );
  const { turn, steps, prepared, log } = council;
  await turn(testRequest({ ask: "FIRST TURN" }));
  steps.length = 0;
  const reply = await turn(testRequest({ ask: "SECOND TURN" }));
  assert.deepEqual(reply.outcome, { kind: "answer", text: "The synthesized answer." });
  assert.ok(steps.includes("prepare codex synth"), steps.join("\n"));
  assert.ok(!steps.includes("prepare claude synth"));
  assert.ok(!steps.includes("run codex synth"), "the codex started ahead synthesized");
  assert.ok(
    reply.progress.includes("claude does not synthesize: it failed before and did not answer now"),
  );
  const synth = (await readFakeLog(log)).filter((c) => c.prompt.includes("=== Candidate A ==="))
    .at(-1);
  assert.equal(synth?.pid, prepared.at(-1)!.pid);
});
