/**
 * The retry-loop cut-off over real child processes: fake CLIs announcing upstream retries in
 * the real CLIs' formats (claude `api_retry` events, codex `Reconnecting...` lines, gemini
 * `Attempt n failed` on stderr) are cut off after `maxUpstreamRetries`, long before their
 * time-out, and no process of theirs outlives the turn.
 */
import assert from "node:assert/strict";
import { createAgentRunner } from "../../../src/agents/run.ts";
import { createCouncil, type TurnRecord } from "../../../src/council/turn/turn.ts";
import { isGone } from "../../support/agent_runner.ts";
import { fakeAgent, type FakeKnobs } from "../../fixtures/fakes.ts";
import { collect, testConfig, testRequest } from "../../support/scripted_agents.ts";
import { within } from "../../support/wait.ts";

const runAgent = createAgentRunner({
  passApiKeys: false,
  selfOrigins: () => [],
  pricing: {},
  killGraceMs: 300,
});

/** A CLI stuck retrying: a retry notice every 20 ms, forever. */
const STUCK: FakeKnobs = { modes: ["retry-loop"], retryDelayMs: 20 };

function councilOf(knobs: Record<"claude" | "codex" | "gemini", FakeKnobs>) {
  const pids: number[] = [];
  const records: TurnRecord[] = [];
  const agents = (["claude", "codex", "gemini"] as const).map((runner) =>
    fakeAgent(runner, knobs[runner], { name: runner, timeoutMs: 60_000 })
  );
  const { runTurn } = createCouncil({
    // Waiting for every child: the retry cut-off alone ends a stuck one (with a quorum in, a
    // child whose upstream fails is cut at once: lateness_test.ts).
    config: {
      ...testConfig({ maxUpstreamRetries: 2, quorum: { minAnswers: 0 } }),
      defaultAgents: agents,
      councilSize: 3,
    },
    runAgent: (agent, prompt, options) =>
      runAgent(agent, prompt, {
        ...options,
        onEvent: (event) => {
          if (event.type === "started" && event.pid) pids.push(event.pid);
          options.onEvent?.(event);
        },
      }),
    onTurnEnd: (record) => records.push(record),
  });
  return { runTurn, pids, records };
}

Deno.test("retry cut-off: each real CLI format stuck retrying is cut off after 2 retries", async () => {
  const { runTurn, pids, records } = councilOf({ claude: STUCK, codex: STUCK, gemini: STUCK });
  const started = performance.now();
  const log = await within(
    collect(runTurn(testRequest(), new AbortController().signal)),
    "the turn, its stuck children cut off",
    20_000,
  );
  assert.ok(performance.now() - started < 15_000, "far from the 60 s time-out");
  assert.equal(log.failed, true);
  for (const name of ["claude", "codex", "gemini"]) {
    assert.ok(
      log.progress.some((l) =>
        new RegExp(`^${name} cut off after \\d+\\.\\ds — 3 upstream retries`).test(l)
      ),
      `${name} cut off:\n${log.progress.join("\n")}`,
    );
    assert.match(log.outcome.kind === "answer" ? log.outcome.text : "", new RegExp(`${name}: `));
  }
  assert.deepEqual(records[0].calls.map((c) => c.cutOff), ["retries", "retries", "retries"]);
  assert.equal(pids.length, 3);
  assert.deepEqual(pids.filter((pid) => !isGone(pid)), [], "no child outlives the turn");
});

Deno.test("retry cut-off: the stuck child is cut off; the others answer and are synthesized", async () => {
  const { runTurn, records } = councilOf({
    claude: {
      reply: "claude draft",
      rules: [{ match: "=== Candidate A ===", reply: "The synthesized answer." }],
    },
    codex: { reply: "codex draft" },
    gemini: STUCK,
  });
  const log = await within(
    collect(runTurn(testRequest(), new AbortController().signal)),
    "the turn, its stuck children cut off",
    20_000,
  );
  assert.deepEqual(log.outcome, { kind: "answer", text: "The synthesized answer." });
  assert.ok(log.progress.some((l) => /^gemini cut off after .* — 3 upstream retries/.test(l)));
  const gemini = records[0].calls.find((c) => c.label === "gemini");
  assert.equal(gemini?.cutOff, "retries");
});
