/**
 * The council engine over real child processes: the agents layer's runner and the fake CLIs.
 */
import assert from "node:assert/strict";
import { createAgentRunner } from "../../../src/agents/run.ts";
import { EXHAUSTIVENESS_DIRECTIVE } from "../../../src/council/prompt/prompts.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { fakeAgent, type FakeKnobs, type FakeRule, readFakeLog } from "../../fixtures/fakes.ts";
import {
  collect,
  READ_TOOL,
  testRequest,
  TurnWatcher,
  withAgents,
} from "../../support/scripted_agents.ts";
import { eventually } from "../../support/wait.ts";
import { isGone } from "../../support/agent_runner.ts";

const runAgent = createAgentRunner({ passApiKeys: false, selfOrigins: () => [], pricing: {} });

/** Matches only the synthesizer's prompt on answer turns. */
const SYNTH_RULE = (reply: string): FakeRule => ({ match: "=== Candidate A ===", reply });

async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Whether the process still runs: an exited one nobody reaped yet (a zombie) does not. */
const isAlive = (pid: number) => !isGone(pid);

function threeFakes(
  log: string,
  knobs: Partial<Record<"claude" | "codex" | "gemini", FakeKnobs>> = {},
) {
  return [
    fakeAgent("claude", { reply: "claude candidate", log, ...knobs.claude }, { name: "claude" }),
    fakeAgent("codex", { reply: "codex candidate", log, ...knobs.codex }, { name: "codex" }),
    fakeAgent("gemini", { reply: "gemini candidate", log, ...knobs.gemini }, { name: "gemini" }),
  ];
}

Deno.test("real processes: 4 children round-robin over 3 agents, agent 0 synthesizes from anonymised candidates", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const agents = threeFakes(log, {
      claude: { reply: "alpha draft", rules: [SYNTH_RULE("The synthesized answer.")] },
      codex: { reply: "bravo draft" },
      gemini: { reply: "charlie draft" },
    });
    const { runTurn } = createCouncil({
      config: withAgents(agents, { fanOutPolicy: "always", councilSize: 4 }),
      runAgent,
    });
    const turn = await collect(
      runTurn(testRequest({ ask: "Compare two sorting strategies" }), new AbortController().signal),
    );

    assert.deepEqual(turn.outcome, { kind: "answer", text: "The synthesized answer." });
    assert.equal(turn.deltas.join(""), "The synthesized answer.");
    assert.equal(turn.usage.calls, 5);
    assert.ok(turn.usage.usd > 0, "cost reported by the fakes is summed");

    const calls = await readFakeLog(log);
    const children = calls.filter((c) => !c.prompt.includes("=== Candidate A ==="));
    const synth = calls.filter((c) => c.prompt.includes("=== Candidate A ==="));
    assert.deepEqual(children.map((c) => c.cli).sort(), ["claude", "claude", "codex", "gemini"]);
    assert.ok(children.every((c) => c.prompt.includes(EXHAUSTIVENESS_DIRECTIVE)));
    assert.equal(synth.length, 1);
    assert.equal(synth[0].cli, "claude");
    for (const draft of ["alpha draft", "bravo draft", "charlie draft"]) {
      assert.ok(synth[0].prompt.includes(draft), "every candidate shown");
    }
    assert.ok(synth[0].prompt.includes("=== Candidate D ==="));
    assert.ok(!/claude|codex|gemini/i.test(synth[0].prompt), "no agent named to the synthesizer");
    assert.ok(
      turn.progress.some((l) =>
        l.startsWith("consulting 4 agents: claude, codex, gemini, claude#2")
      ),
    );
  });
});

Deno.test("real processes: background traffic pins exactly one child to the exact model, no directive", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const agents = [
      fakeAgent("codex", { reply: "codex", log }, { name: "codex" }),
      fakeAgent("claude", { reply: "A short title", log }, { name: "claude" }),
    ];
    const { runTurn } = createCouncil({
      config: withAgents(agents, { fanOutPolicy: "always" }),
      runAgent,
    });
    const turn = await collect(
      runTurn(
        testRequest({ model: "claude-haiku-4-5-20251001", ask: "Title?" }),
        new AbortController().signal,
      ),
    );
    assert.deepEqual(turn.outcome, { kind: "answer", text: "A short title" });
    const calls = await readFakeLog(log);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].cli, "claude");
    assert.equal(calls[0].model, "claude-haiku-4-5-20251001");
    assert.ok(!calls[0].prompt.includes(EXHAUSTIVENESS_DIRECTIVE));
  });
});

Deno.test("real processes: judge, action proposals and unanimous skip of synthesis", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const proposal = JSON.stringify({
      kind: "tool",
      name: "Read",
      input: { file_path: `${dir}/notes.txt` },
    });
    const judgeRule: FakeRule = {
      match: '"fanOut": true or false',
      reply: '{"fanOut": true, "reason": "worth comparing"}',
    };
    const agents = threeFakes(log, {
      claude: { reply: `I'd read it first:\n\`\`\`json\n${proposal}\n\`\`\``, rules: [judgeRule] },
      codex: { reply: proposal },
      gemini: { reply: proposal },
    });
    // Without a quorum every child is waited for (a majority would otherwise end the wait).
    const { runTurn } = createCouncil({
      config: withAgents(agents, { fanOutPolicy: "auto", quorum: { minAnswers: 0 } }),
      runAgent,
    });
    const turn = await collect(
      runTurn(
        testRequest({ ask: "Summarise notes.txt and flag risks", tools: [READ_TOOL], cwd: dir }),
        new AbortController().signal,
      ),
    );
    assert.deepEqual(turn.outcome, {
      kind: "tool",
      name: "Read",
      input: { file_path: `${dir}/notes.txt` },
    });
    assert.equal(turn.deltas.length, 0);
    const calls = await readFakeLog(log);
    assert.equal(calls.length, 4, "judge + 3 children, no synthesizer");
    const judge = calls.filter((c) => c.prompt.includes('"fanOut"'));
    assert.equal(judge.length, 1);
    assert.equal(judge[0].model, "haiku");
    assert.ok(
      calls.filter((c) => c !== judge[0]).every((c) => c.cwd === dir),
      "children run in the recovered cwd",
    );
    assert.ok(turn.progress.some((l) => l.includes("judge: worth comparing")));
    assert.ok(turn.progress.some((l) => l.startsWith("unanimous (3 agents)")));
  });
});

Deno.test("real processes: without a recovered cwd each child runs in a temp dir that is removed", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const { runTurn } = createCouncil({
      config: withAgents(threeFakes(log, { claude: { rules: [SYNTH_RULE("done")] } }), {
        fanOutPolicy: "always",
      }),
      runAgent,
    });
    await collect(runTurn(testRequest(), new AbortController().signal));
    const calls = await readFakeLog(log);
    assert.equal(calls.length, 4);
    const cwds = new Set(calls.map((c) => c.cwd));
    assert.equal(cwds.size, 4, "a fresh directory per child");
    for (const cwd of cwds) {
      assert.match(cwd, /council-child-/);
      await assert.rejects(Deno.stat(cwd), Deno.errors.NotFound);
    }
  });
});

Deno.test("real processes: a failing child is reported and left out; the rest still answer", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const agents = threeFakes(log, {
      claude: { rules: [SYNTH_RULE("merged")] },
      codex: { modes: ["crash"], stderr: "codex: not logged in" },
    });
    const { runTurn } = createCouncil({
      config: withAgents(agents, { fanOutPolicy: "always" }),
      runAgent,
    });
    const turn = await collect(runTurn(testRequest(), new AbortController().signal));
    assert.deepEqual(turn.outcome, { kind: "answer", text: "merged" });
    assert.ok(
      turn.progress.some((l) => l.startsWith("codex: failed after") && l.includes("not logged in")),
    );
  });
});

Deno.test("real processes: cancelling a turn kills every child and grandchild", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const pidFile = `${dir}/grandchildren.pids`;
    const hang: FakeKnobs = { modes: ["hang", "grandchildren"], pidFile, grandchildren: 1 };
    const agents = threeFakes(log, { claude: hang, codex: hang, gemini: hang });
    const { runTurn } = createCouncil({
      config: withAgents(agents, { fanOutPolicy: "always" }),
      runAgent,
    });
    const controller = new AbortController();
    const watcher = new TurnWatcher(runTurn(testRequest(), controller.signal));
    const pids = async () =>
      (await Deno.readTextFile(pidFile).catch(() => "")).split("\n").filter((l) => l.trim())
        .map(Number);
    await eventually(
      async () => (await readFakeLog(log)).length === 3 && (await pids()).length === 3,
      "all three children and their grandchildren to start",
    );
    const calls = await readFakeLog(log);
    controller.abort();
    const turn = await watcher.finished;
    assert.match(turn.outcome.kind === "answer" ? turn.outcome.text : "", /cancelled/);
    for (const call of calls) {
      assert.ok(!isAlive(call.pid), `child ${call.cli} ${call.pid} is dead`);
    }
    const grandchildren = await pids();
    assert.equal(grandchildren.length, 3);
    for (const pid of grandchildren) assert.ok(!isAlive(pid), `grandchild ${pid} is dead`);
  });
});

Deno.test("real processes: interleaved child text reaches progress, never the answer", async () => {
  await withTemp(async (dir) => {
    const log = `${dir}/fake.log`;
    const agents = threeFakes(log, {
      claude: { reply: "alpha thinks\nsecond line", rules: [SYNTH_RULE("only the synthesis")] },
      codex: { reply: "bravo thinks" },
      gemini: { reply: "charlie thinks" },
    });
    const { runTurn } = createCouncil({
      // Every child's text is the point: no quorum may cut a slow one off under load.
      config: withAgents(agents, {
        fanOutPolicy: "always",
        progressDetail: "interleaved",
        quorum: { minAnswers: 0 },
      }),
      runAgent,
    });
    const turn = await collect(runTurn(testRequest(), new AbortController().signal));
    assert.ok(turn.progress.includes("claude: alpha thinks"), JSON.stringify(turn.progress));
    assert.ok(turn.progress.includes("claude: second line"));
    assert.ok(turn.progress.includes("gemini: charlie thinks"));
    assert.equal(turn.deltas.join(""), "only the synthesis");
    assert.deepEqual(turn.outcome, { kind: "answer", text: "only the synthesis" });
  });
});
