/**
 * What an answer turn records for outcome signals: how the answer came to be (written by the
 * synthesizer, or one candidate picked) and, under isolation, whose changes were applied, refused
 * in conflict, or that none were.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import type { TurnRecord } from "../../../src/council/records.ts";
import { Isolator } from "../../../src/workspace/isolation.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  type FakeCall,
  type FakeReply,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";
import { gitRepo, tempDir, writeFiles } from "../../support/git_repos.ts";

type Reply = FakeReply | ((call: FakeCall) => FakeReply | Promise<FakeReply>);

async function turn(replies: Record<string, Reply>, isolated?: { state: string; cwd: string }) {
  const ended: TurnRecord[] = [];
  const fake = fakeAgents(byAgent(replies as Parameters<typeof byAgent>[0]));
  const { runTurn } = createCouncil({
    config: testConfig(),
    runAgent: fake.runAgent,
    random: () => 0.999,
    isolator: isolated ? new Isolator({ root: isolated.state }) : undefined,
    onTurnEnd: (record) => void ended.push(record),
  });
  const cwd = isolated?.cwd;
  const system = cwd ? `You are a coding assistant.\nPrimary working directory: ${cwd}` : undefined;
  await collect(runTurn(testRequest({ cwd, system }), new AbortController().signal));
  return ended[0];
}

const writer = (name: string) => async (call: FakeCall) => {
  await writeFiles(call.options.cwd!, { [`${name}.txt`]: `by ${name}\n` });
  return { text: `${name} wrote ${name}.txt` };
};

Deno.test("answer signals: the synthesis says written or picked (and whose); none without one", async () => {
  const written = await turn({
    "*:child": { text: "an answer" },
    "claude:synth": { text: "merged" },
  });
  assert.deepEqual(written.decision.synthesis, { kind: "written", agent: "claude", candidates: 3 });
  assert.equal(written.workspace, undefined);
  const picked = await turn({
    "claude:child": { text: "claude's answer" },
    "codex:child": { text: "codex's answer" },
    "gemini:child": { text: "gemini's answer" },
    "claude:synth": { text: '{"choose": 2}' },
  });
  assert.equal(picked.decision.synthesis?.kind, "picked");
  assert.equal(picked.decision.synthesis?.picked, "codex");
  const none = await turn({
    "*:child": { text: "an answer" },
    "*:synth": { ok: false, error: "down", text: "" },
  });
  assert.equal(none.decision.synthesis, undefined);
});

Deno.test("answer signals: under isolation, whose changes were applied, in conflict, or none", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": "alpha\n" });
  const writers = {
    "claude:child": writer("claude"),
    "codex:child": writer("codex"),
    "gemini:child": writer("gemini"),
  };
  const where = { state: state.path, cwd: repo.path };
  const applied = await turn(
    { ...writers, "claude:synth": { text: "CHANGES: B\ncodex's." } },
    where,
  );
  assert.deepEqual(applied.workspace, { status: "applied", agent: "codex" });
  const none = await turn({ ...writers, "claude:synth": { text: "CHANGES: none\nNo." } }, where);
  assert.deepEqual(none.workspace, { status: "none" });
  const conflict = await turn({
    ...writers,
    "claude:synth": async () => {
      await Deno.writeTextFile(join(repo.path, "gemini.txt"), "the user's own\n");
      return { text: "CHANGES: C\ngemini's." };
    },
  }, where);
  assert.deepEqual(conflict.workspace, { status: "conflict", agent: "gemini" });
});
