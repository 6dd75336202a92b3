/**
 * Model API children only answer: a fanned-out answer turn in a git project makes isolated
 * workspaces for the children that can touch files (CLIs, commands) and none for model APIs.
 */
import assert from "node:assert/strict";
import type { ConfigFile } from "../../../src/config/mod.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { Isolator } from "../../../src/workspace/isolation.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";
import { gitRepo, linkedWorktrees, listDir, tempDir } from "../../support/git_repos.ts";

const API = { name: "api", runner: "anthropic", model: "claude-sonnet-4-5" } as const;
const GPT = {
  name: "gpt",
  runner: "openai",
  model: "gpt-5.5",
  baseUrl: "http://localhost:11434/v1",
} as const;
const CLAUDE = { name: "claude", runner: "claude", model: "opus" } as const;

function council(state: string, defaultAgents: NonNullable<ConfigFile["defaultAgents"]>) {
  const fake = fakeAgents(byAgent({
    "*:child": (call) => ({ text: `${call.agent.name} answers` }),
    "*:synth": { text: "combined" },
  }));
  const { runTurn } = createCouncil({
    config: testConfig({ defaultAgents, fanOutPolicy: "always", fanOutScope: "every-turn" }),
    runAgent: fake.runAgent,
    random: () => 0.999,
    isolator: new Isolator({ root: state }),
  });
  return { runTurn, fake };
}

function request(cwd: string) {
  return testRequest({
    cwd,
    system: `You are a coding assistant.\nPrimary working directory: ${cwd}`,
  });
}

Deno.test("model API children: a council of model APIs makes no isolated workspace", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "notes.txt": "milk\n" });
  const { runTurn, fake } = council(state.path, [API, GPT]);
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));
  assert.ok(
    log.progress.includes(
      "no isolated workspaces: the children are model APIs, which touch no files",
    ),
    log.progress.join("\n"),
  );
  assert.ok(!log.progress.some((l) => l.includes("worktree")), "no worktree made or reset");
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.deepEqual(await listDir(state.path), [], "nothing in the state directory");
  const children = fake.calls.filter((c) => c.role === "child");
  assert.equal(children.length, 2);
  for (const child of children) {
    assert.equal(child.options.cwd, repo.path, `${child.agent.name} is told the real directory`);
    assert.ok(child.prompt.includes(repo.path));
  }
  assert.equal(log.outcome.kind, "answer");
});

Deno.test("model API children: in a mixed council only the CLI child gets a copy", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "notes.txt": "milk\n" });
  const { runTurn, fake } = council(state.path, [CLAUDE, API]);
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));
  assert.ok(
    log.progress.some((l) =>
      /^each child works in its own git worktree .*, made in [\d.]+ s \(none for 1 model API\)$/
        .test(l)
    ),
    log.progress.join("\n"),
  );
  assert.ok(log.progress.includes("preparing 1 isolated workspace for the children"));
  const child = (name: string) =>
    fake.calls.find((c) => c.role === "child" && c.agent.name === name)!;
  const cli = child("claude").options.cwd!;
  assert.notEqual(cli, repo.path, "the CLI child works in its own copy");
  assert.ok(child("claude").prompt.includes(cli));
  assert.equal(child("api").options.cwd, repo.path);
  assert.ok(!child("api").prompt.includes(state.path), "the API child's prompt names no copy");
  assert.equal(log.outcome.kind, "answer");
  assert.deepEqual(linkedWorktrees(repo.path), [], "the turn's worktree is gone with it");
});
