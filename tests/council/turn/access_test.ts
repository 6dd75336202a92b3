/** What each agent call may do to the workspace: the council decides, per turn kind and role. */
import assert from "node:assert/strict";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import type { TurnRequest } from "../../../src/council/types.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  type FakeReply,
  READ_TOOL,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";

const PROPOSAL = (path: string) =>
  JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });

async function accessOf(
  file: Parameters<typeof testConfig>[0],
  replies: Record<string, FakeReply>,
  tools = [READ_TOOL],
  request: Partial<TurnRequest> = {},
): Promise<string[]> {
  const fake = fakeAgents(byAgent(replies));
  const { runTurn } = createCouncil({ config: testConfig(file), runAgent: fake.runAgent });
  const turn = { ...testRequest({ tools, cwd: "/work/project" }), ...request };
  await collect(runTurn(turn, new AbortController().signal));
  return fake.calls.map((c) => `${c.agent.name}:${c.role}:${c.options.access}`);
}

const SPLIT_VOTE = {
  "claude:child": { text: PROPOSAL("/a") },
  "codex:child": { text: PROPOSAL("/b") },
  "gemini:child": { text: PROPOSAL("/a") },
  "claude:synth": { text: '{"choose": 1}' },
};

Deno.test("access: on action turns children and the synthesizer run read-only by default", async () => {
  assert.deepEqual(await accessOf({}, SPLIT_VOTE), [
    "claude:child:read-only",
    "codex:child:read-only",
    "gemini:child:read-only",
    "claude:synth:read-only",
  ]);
});

Deno.test("access: childAccess: workspace-write lets action-turn children and synthesizer write", async () => {
  assert.deepEqual(await accessOf({ childAccess: "workspace-write" }, SPLIT_VOTE), [
    "claude:child:workspace-write",
    "codex:child:workspace-write",
    "gemini:child:workspace-write",
    "claude:synth:workspace-write",
  ]);
});

Deno.test("access: a lone action-turn child is read-only too; the judge always is", async () => {
  assert.deepEqual(
    await accessOf(
      { fanOutPolicy: "auto", judge: { runner: "claude", model: "haiku" } },
      {
        "judge:judge": { text: '{"fanOut": false, "reason": "simple"}' },
        "*:child": {
          text: PROPOSAL("/a"),
        },
      },
    ),
    ["judge:judge:read-only", "claude:child:read-only"],
  );
});

Deno.test("access: a lone answer-turn child works in the real directory, full-auto", async () => {
  assert.deepEqual(
    await accessOf({ fanOutPolicy: "never" }, { "*:child": { text: "done" } }, []),
    ["claude:child:workspace-write"],
  );
});

Deno.test("access: a lone child answering housekeeping (a title, a summary) only looks; a cheap subagent still writes", async () => {
  const title = { housekeeping: true, reason: "x-codex-turn-metadata: thread_title" };
  assert.deepEqual(
    await accessOf({ fanOutPolicy: "always" }, { "*:child": { text: "Fix the parser" } }, [], {
      traffic: title,
    }),
    ["claude:child:read-only"],
  );
  // Housekeeping by the requested model's name alone (a subagent on a small model) may edit.
  assert.deepEqual(
    await accessOf({ fanOutPolicy: "always" }, { "*:child": { text: "done" } }, [], {
      model: "claude-haiku-4-5",
    }),
    ["claude:child:workspace-write"],
  );
});
