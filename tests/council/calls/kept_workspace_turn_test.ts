/**
 * A session's isolated children on its second turn: their worktrees are the first turn's, reset
 * in place, and the warm pool serves them children started there once the first turn's changes
 * were cleaned away (fake agents writing real files, a fake pool runner, real git).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { Isolator } from "../../../src/workspace/isolation.ts";
import { createWarmPool } from "../../../src/agents/warm_pool.ts";
import type { AgentRunner, PreparedRun, RunAgent } from "../../../src/agents/types.ts";
import { FakeClock } from "../../support/fake_clock.ts";
import { eventually } from "../../support/wait.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  type FakeCall,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";
import { gitRepo, linkedWorktrees, listDir, tempDir, writeFiles } from "../../support/git_repos.ts";

/** The files in a worktree (its `.git` link aside). */
async function filesIn(dir: string): Promise<string[]> {
  return (await listDir(dir)).filter((name) => name !== ".git");
}

/** A child that leaves a file of its own, after noting which files it found. */
function writer(seen: Map<string, string[]>) {
  return async (call: FakeCall) => {
    const cwd = call.options.cwd!;
    seen.set(`${call.agent.name}:${call.options.turnId}`, await filesIn(cwd));
    await writeFiles(cwd, { [`${call.agent.name}.txt`]: "mine\n", "shared.txt": "edited\n" });
    return { text: `${call.agent.name} wrote a file` };
  };
}

/** The fake agents behind a runner whose prepared children note where and what they found. */
function poolRunner(runAgent: RunAgent) {
  const prepared: { cwd?: string; found: string[]; served: boolean }[] = [];
  const runner = Object.assign(
    (...args: Parameters<AgentRunner>) => runAgent(...args),
    {
      prepare: async (agent, options): Promise<PreparedRun> => {
        const record = {
          cwd: options.cwd,
          found: options.cwd ? await filesIn(options.cwd) : [],
          served: false,
        };
        prepared.push(record);
        return {
          agent: agent.name,
          run: (prompt, runOptions) => {
            record.served = true;
            return runAgent(agent, prompt, { ...options, ...runOptions });
          },
          discard: () => Promise.resolve(),
        };
      },
    } satisfies Pick<AgentRunner, "prepare">,
  );
  return { runner, prepared };
}

Deno.test("kept workspaces: a session's second turn resets its children's worktrees and the pool serves them", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": "alpha\n" });
  const seen = new Map<string, string[]>();
  const fake = fakeAgents(
    byAgent({ "*:child": writer(seen), "claude:synth": { text: "the answer" } }),
  );
  const { runner, prepared } = poolRunner(fake.runAgent);
  const clock = new FakeClock();
  const pool = createWarmPool(runner, { size: 1, idleMs: 60_000, maxProcesses: 8 }, clock);
  const isolator = new Isolator({ root: state.path, keep: { idleMs: 60_000, clock } });
  const { runTurn } = createCouncil({ config: testConfig(), runAgent: pool.runner, isolator });
  const turn = () =>
    collect(
      runTurn(testRequest({ cwd: repo.path, sessionKey: "one" }), new AbortController().signal),
    );
  try {
    await turn();
    const children = fake.calls.filter((c) => c.role === "child");
    const slots = children.map((c) => c.options.cwd!);
    assert.ok(slots.every((cwd) => cwd.startsWith(`${state.path}/s-`)), "in the session's slot");
    assert.ok(children.every((c) => c.options.reusedAfter && !c.options.scratch));
    // Started there for the next turn once the turn's changes were cleaned away.
    await eventually(() => slots.every((cwd) => prepared.some((p) => p.cwd === cwd)), "refilled");
    for (const child of prepared.filter((p) => slots.includes(p.cwd!))) {
      assert.deepEqual(child.found, ["shared.txt"], "a waiting child sees no earlier change");
    }

    const second = await turn();
    assert.ok(
      second.progress.some((line) =>
        /reset 3 isolated workspaces kept from the session's last turn in \d+\.\d s$/.test(line)
      ),
    );
    const next = fake.calls.filter((c) => c.role === "child").slice(3);
    assert.deepEqual(next.map((c) => c.options.cwd), slots, "the same paths");
    for (const cwd of slots) {
      assert.ok(prepared.some((p) => p.cwd === cwd && p.served), `a pooled child ran in ${cwd}`);
    }
    for (const call of next) {
      assert.deepEqual(seen.get(`${call.agent.name}:${call.options.turnId}`), ["shared.txt"]);
    }
    assert.equal(linkedWorktrees(repo.path).length, 3, "kept between turns");
  } finally {
    await pool.shutdown();
    await isolator.shutdown();
  }
  assert.deepEqual(await listDir(state.path), []);
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.equal(await Deno.readTextFile(join(repo.path, "shared.txt")), "alpha\n");
});

Deno.test("kept workspaces: a child still ending after its reply writes nothing the next turn sees", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": "alpha\n" });
  const clock = new FakeClock();
  const isolator = new Isolator({ root: state.path, keep: { idleMs: 60_000, clock } });
  const late: string[] = [];
  // Its process ends after its reply (say, a CLI whose final line came first): it writes once
  // its copy is cleaned for the next turn, or after a bounded wait when the turn waits for it.
  const lingering = (call: FakeCall) => {
    const cwd = call.options.cwd!;
    call.options.onWindDown?.((async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise((resolve) => (timer = setTimeout(resolve, 300)));
      await Promise.race([call.options.reusedAfter, bound]);
      clearTimeout(timer);
      await writeFiles(cwd, { "late.txt": "written while ending\n" });
      late.push(cwd);
    })());
    return { text: `${call.agent.name} answered` };
  };
  const fake = fakeAgents(
    byAgent({ "*:child": lingering, "claude:synth": { text: "the answer" } }),
  );
  const { runTurn } = createCouncil({ config: testConfig(), runAgent: fake.runAgent, isolator });
  try {
    await collect(
      runTurn(testRequest({ cwd: repo.path, sessionKey: "one" }), new AbortController().signal),
    );
    assert.equal(late.length, 3, "every child wrote while ending");
    assert.equal(isolator.registry.kept, 1, "the slot is kept");
    // What the warm pool would serve the session's next turn: no file of the last one's.
    for (const cwd of late) assert.deepEqual(await filesIn(cwd), ["shared.txt"], cwd);
  } finally {
    await isolator.shutdown();
  }
});
