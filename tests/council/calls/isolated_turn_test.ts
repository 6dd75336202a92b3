/**
 * Fanned-out answer turns in isolated workspaces, with fake children that really write files
 * into their working directories inside a real temporary git repository.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { Isolator } from "../../../src/workspace/isolation.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  type FakeCall,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";
import {
  exists,
  gitRepo,
  linkedWorktrees,
  listDir,
  read,
  sh,
  status,
  tempDir,
  writeFiles,
} from "../../support/git_repos.ts";

const SHARED = "alpha\nbeta\ngamma\n";

type Script = Parameters<typeof fakeAgents>[0];

function council(state: string, script: Script, file: Parameters<typeof testConfig>[0] = {}) {
  const fake = fakeAgents(script);
  const { runTurn } = createCouncil({
    config: testConfig(file),
    runAgent: fake.runAgent,
    // Keeps the shuffled order equal to child order: candidate A is claude, B codex, C gemini.
    random: () => 0.999,
    isolator: new Isolator({ root: state }),
  });
  return { runTurn, fake };
}

/** A child that rewrites shared.txt its own way, line by line, and adds a file of its own. */
function writer(name: string) {
  return async (call: FakeCall) => {
    const cwd = call.options.cwd!;
    for (let i = 0; i < 10; i++) {
      await Deno.writeTextFile(join(cwd, "shared.txt"), `${name} ${i}\n`, { append: i > 0 });
    }
    await writeFiles(cwd, { [`${name}.txt`]: `by ${name}\n` });
    return { text: `${name} rewrote shared.txt in ${cwd}` };
  };
}

const WRITERS = {
  "claude:child": writer("claude"),
  "codex:child": writer("codex"),
  "gemini:child": writer("gemini"),
};

function request(cwd: string) {
  return testRequest({
    cwd,
    system: `You are a coding assistant.\nPrimary working directory: ${cwd}`,
  });
}

Deno.test("isolated turn: no write reaches the workspace except the chosen candidate's diff", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const { runTurn, fake } = council(
    state.path,
    byAgent({
      ...WRITERS,
      "claude:synth": { text: "CHANGES: B\n\nshared.txt now holds codex's lines." },
    }),
  );
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));

  const codexLines = Array.from({ length: 10 }, (_, i) => `codex ${i}\n`).join("");
  assert.equal(await read(join(repo.path, "shared.txt")), codexLines, "one child's, not a mix");
  assert.equal(await read(join(repo.path, "codex.txt")), "by codex\n");
  assert.equal(await exists(join(repo.path, "claude.txt")), false);
  assert.equal(await exists(join(repo.path, "gemini.txt")), false);
  assert.deepEqual(status(repo.path), [" M shared.txt", "?? codex.txt"]);

  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.equal(
    text,
    "shared.txt now holds codex's lines.\n\n---\nChanges applied to the workspace (from codex): " +
      "2 files: codex.txt +1 −0, shared.txt +10 −3.",
  );
  assert.equal(log.deltas.join(""), text, "the choice line never reached the stream");
  for (const name of ["claude", "codex", "gemini"]) {
    assert.ok(
      log.progress.includes(`${name} changed 2 files: ${name}.txt +1 −0, shared.txt +10 −3`),
      `progress shows ${name}'s files: ${log.progress.join(" | ")}`,
    );
  }
  assert.ok(log.progress.includes("claude chose codex's changes"));
  assert.ok(log.progress.some((l) => l.startsWith("each child works in its own git worktree")));

  const children = fake.calls.filter((c) => c.role === "child");
  for (const child of children) {
    const cwd = child.options.cwd!;
    assert.ok(cwd.startsWith(`${state.path}/`), "a child works in its own copy");
    assert.equal(child.options.access, "workspace-write");
    assert.ok(child.prompt.includes(`Primary working directory: ${cwd}`), "paths point to it");
    assert.ok(!child.prompt.includes(repo.path), "the real path is not shown to the child");
  }
  assert.equal(new Set(children.map((c) => c.options.cwd)).size, 3);
  const synth = fake.calls.find((c) => c.role === "synth")!;
  assert.equal(synth.options.cwd, repo.path);
  assert.equal(synth.options.access, "read-only");
  assert.match(synth.prompt, /=== Candidate B's file changes ===\ndiff --git a\/codex.txt/);
  assert.match(synth.prompt, /\+codex 9\n/);
  assert.ok(synth.prompt.includes(`codex rewrote shared.txt in ${repo.path}`), "paths mapped back");
  assert.deepEqual(linkedWorktrees(repo.path), [], "worktrees removed after the turn");
  assert.deepEqual(await listDir(state.path), []);
});

Deno.test("isolated turn: a pick applies exactly the picked candidate's diff and sends its answer", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const { runTurn, fake } = council(
    state.path,
    byAgent({ ...WRITERS, "claude:synth": { text: '{"choose": "C"}' } }),
  );
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));

  const geminiLines = Array.from({ length: 10 }, (_, i) => `gemini ${i}\n`).join("");
  assert.equal(await read(join(repo.path, "shared.txt")), geminiLines);
  assert.equal(await read(join(repo.path, "gemini.txt")), "by gemini\n");
  assert.equal(await exists(join(repo.path, "claude.txt")), false);
  assert.equal(await exists(join(repo.path, "codex.txt")), false);
  assert.deepEqual(status(repo.path), [" M shared.txt", "?? gemini.txt"]);
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.equal(
    text,
    `gemini rewrote shared.txt in ${repo.path}\n\n---\nChanges applied to the workspace ` +
      "(from gemini): 2 files: gemini.txt +1 −0, shared.txt +10 −3.",
    "its answer verbatim, with paths mapped back from its copy",
  );
  assert.equal(log.deltas.join(""), text);
  assert.ok(log.progress.includes("claude picked gemini's answer"));
  assert.match(fake.calls.find((c) => c.role === "synth")!.prompt, /its changes are applied/);
  assert.deepEqual(linkedWorktrees(repo.path), [], "worktrees removed after the turn");
});

Deno.test("isolated turn: children see the user's uncommitted and untracked files", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  await writeFiles(repo.path, {
    "shared.txt": "edited, not committed\n",
    "draft.md": "untracked\n",
  });
  const seen = async (call: FakeCall) => {
    const cwd = call.options.cwd!;
    return {
      text: `${await read(join(cwd, "shared.txt"))}|${await read(join(cwd, "draft.md"))}`,
    };
  };
  const { runTurn, fake } = council(
    state.path,
    byAgent({ "*:child": seen, "claude:synth": { text: "done" } }),
  );
  await collect(runTurn(request(repo.path), new AbortController().signal));
  const children = fake.calls.filter((c) => c.role === "child");
  assert.equal(children.length, 3);
  const synth = fake.calls.find((c) => c.role === "synth")!;
  assert.equal(synth.prompt.split("edited, not committed\n|untracked\n").length - 1, 3);
  assert.ok(!synth.prompt.includes("file changes ==="), "no diffs when nobody changed files");
  assert.deepEqual(status(repo.path), [" M shared.txt", "?? draft.md"]);
});

Deno.test("isolated turn: a conflicting change made to the workspace during the turn is refused", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const { runTurn } = council(
    state.path,
    byAgent({
      ...WRITERS,
      "claude:synth": async () => {
        // The user edits the same file while the synthesizer writes.
        await Deno.writeTextFile(join(repo.path, "shared.txt"), "the user's own edit\n");
        return { text: "CHANGES: A\nclaude's version is best." };
      },
    }),
  );
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.equal(
    text,
    "claude's version is best.\n\n---\nThe chosen changes (from claude: 2 files: claude.txt +1 −0, " +
      "shared.txt +10 −3) were NOT applied: the workspace changed during the turn in a way " +
      "that conflicts with these changes (shared.txt). Nothing was written.",
  );
  assert.equal(await read(join(repo.path, "shared.txt")), "the user's own edit\n");
  assert.equal(await exists(join(repo.path, "claude.txt")), false);
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("isolated turn: a cancelled turn leaves no worktree behind", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const controller = new AbortController();
  const { runTurn, fake } = council(
    state.path,
    byAgent({
      "*:child": async (call: FakeCall) => {
        await writeFiles(call.options.cwd!, { "half.txt": "half done\n" });
        if (fake.calls.filter((c) => c.role === "child").length === 3) controller.abort();
        return { hang: true };
      },
    }),
  );
  const log = await collect(runTurn(request(repo.path), controller.signal));
  assert.equal(fake.calls.filter((c) => c.role === "child").length, 3);
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0);
  assert.equal(log.outcome.kind, "answer");
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.deepEqual(await listDir(state.path), []);
  assert.deepEqual(status(repo.path), [], "nothing written");
});

Deno.test("isolated turn: the synthesizer naming no candidate applies nothing; without a synthesizer the best candidate's changes go with its answer", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const none = council(
    state.path,
    byAgent({ ...WRITERS, "claude:synth": { text: "Here is my answer, no choice line." } }),
  );
  const log = await collect(none.runTurn(request(repo.path), new AbortController().signal));
  assert.equal(
    log.outcome.kind === "answer" && log.outcome.text,
    "Here is my answer, no choice line.\n\n---\n" +
      "No file changes were applied: the synthesizer did not say whose changes to apply.",
  );
  assert.deepEqual(status(repo.path), []);

  const broken = council(state.path, byAgent({ ...WRITERS, "*:synth": { ok: false } }));
  const fallback = await collect(broken.runTurn(request(repo.path), new AbortController().signal));
  const text = fallback.outcome.kind === "answer" ? fallback.outcome.text : "";
  assert.match(text, new RegExp(`^claude rewrote shared.txt in ${repo.path}\n`));
  assert.match(text, /Changes applied to the workspace \(from claude\): 2 files/);
  assert.equal(await read(join(repo.path, "claude.txt")), "by claude\n");
  assert.deepEqual(linkedWorktrees(repo.path), []);
});

Deno.test("isolated turn: a small directory outside git is copied; a too large one runs children read-only", async () => {
  await using dir = await tempDir();
  await using state = await tempDir();
  await writeFiles(dir.path, { "shared.txt": SHARED });
  const script = byAgent({ ...WRITERS, "claude:synth": { text: "CHANGES: C\nok" } });
  const copied = council(state.path, script);
  const log = await collect(copied.runTurn(request(dir.path), new AbortController().signal));
  assert.ok(log.progress.some((l) => l.startsWith("each child works in its own copy")));
  assert.deepEqual(await listDir(dir.path), ["gemini.txt", "shared.txt"]);
  assert.deepEqual(await listDir(state.path), []);

  const fake = fakeAgents(
    byAgent({ "*:child": { text: "looked only" }, "*:synth": { text: "ok" } }),
  );
  const small = createCouncil({
    config: testConfig(),
    runAgent: fake.runAgent,
    isolator: new Isolator({ root: state.path, copyLimits: { maxFiles: 1, maxBytes: 10 } }),
  });
  const readOnly = await collect(small.runTurn(request(dir.path), new AbortController().signal));
  assert.ok(readOnly.progress.includes(
    "children run read-only: the directory is not in git and it is larger than a copy is made " +
      "for (1 file or 10 bytes)",
  ));
  for (const call of fake.calls) {
    assert.equal(call.options.access, "read-only", `${call.agent.name} ${call.role}`);
    assert.equal(call.options.cwd, dir.path);
  }
});

Deno.test("isolated turn: `isolation: shared` runs children in the real workspace, as before", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const { runTurn, fake } = council(
    state.path,
    byAgent({ "*:child": { text: "x" }, "*:synth": { text: "y" } }),
    { isolation: "shared" },
  );
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));
  assert.equal(log.outcome.kind === "answer" && log.outcome.text, "y");
  for (const call of fake.calls) {
    assert.equal(call.options.cwd, repo.path);
    assert.equal(call.options.access, "workspace-write");
  }
  assert.equal(sh(repo.path, "worktree", "list").trim().split("\n").length, 1);
});

Deno.test("isolated turn: when git cannot apply at all, the answer says nothing was written", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const { runTurn } = council(
    state.path,
    byAgent({
      ...WRITERS,
      "claude:synth": async () => {
        // The repository disappears under the turn (say, the user deleted its .git).
        await Deno.remove(join(repo.path, ".git"), { recursive: true });
        return { text: "CHANGES: A\nDone." };
      },
    }),
  );
  const log = await collect(runTurn(request(repo.path), new AbortController().signal));
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.match(
    text,
    /^Done\.\n\n---\nThe chosen changes \(from claude: 2 files: .*\) were NOT applied: git diff failed .*\. Nothing was written\.$/,
  );
  assert.equal(await read(join(repo.path, "shared.txt")), SHARED);
  assert.deepEqual(await listDir(state.path), [], "the copies are still removed");
});

Deno.test("isolated turn: each child's prompt keeps a byte-identical prefix from turn to turn", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  const { runTurn, fake } = council(
    state.path,
    byAgent({ "*:child": { text: "an answer" }, "claude:synth": { text: "the answer" } }),
  );
  const system = `You are a coding assistant.\nPrimary working directory: ${repo.path}`;
  const asks = ["Explain shared.txt", "Now shorten it", "And sort it"];
  for (let turn = 0; turn < asks.length; turn++) {
    const transcript = asks.slice(0, turn + 1).flatMap((ask, i) =>
      i < turn
        ? [{ kind: "user" as const, text: ask }, { kind: "assistant" as const, text: "ok" }]
        : [
          { kind: "user" as const, text: ask },
        ]
    );
    await collect(runTurn(
      testRequest({ cwd: repo.path, system, transcript, ask: asks[turn], sessionKey: "one" }),
      new AbortController().signal,
    ));
  }
  const children = fake.calls.filter((c) => c.role === "child");
  assert.equal(children.length, 9);
  for (const agent of ["claude", "codex", "gemini"]) {
    const turns = children.filter((c) => c.agent.name === agent).map((c) => c.given);
    const cwds = children.filter((c) => c.agent.name === agent).map((c) => c.options.cwd);
    assert.equal(new Set(cwds).size, 1, `${agent} works in one path all session: ${cwds}`);
    assert.ok(cwds[0]!.startsWith(`${state.path}/`), "still its own copy");
    for (let i = 1; i < turns.length; i++) {
      const [before, after] = [turns[i - 1], turns[i]];
      assert.ok(typeof before !== "string" && typeof after !== "string");
      assert.deepEqual(after.preamble, before.preamble, `${agent}'s system prompt, turn ${i + 1}`);
      assert.deepEqual(
        after.conversation.slice(0, before.conversation.length),
        before.conversation,
        `${agent}'s history, turn ${i + 1}`,
      );
    }
  }
  assert.deepEqual(await listDir(state.path), [], "the slot is removed after each turn");
});

Deno.test("isolated turn: a second turn of the session running at once gets paths of its own", async () => {
  await using repo = await tempDir();
  await using state = await tempDir();
  await gitRepo(repo.path, { "shared.txt": SHARED });
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  let started = 0;
  const { runTurn, fake } = council(
    state.path,
    byAgent({
      "*:child": async () => {
        // Both turns hold their workspaces until all six children have started.
        if (++started === 6) release();
        await held;
        return { text: "an answer" };
      },
      "claude:synth": { text: "the answer" },
    }),
  );
  const turn = () =>
    collect(
      runTurn(testRequest({ cwd: repo.path, sessionKey: "one" }), new AbortController().signal),
    );
  await Promise.all([turn(), turn()]);
  const cwds = fake.calls.filter((c) => c.role === "child").map((c) => c.options.cwd);
  assert.equal(new Set(cwds).size, 6, "no child shares another's copy");
  assert.deepEqual(linkedWorktrees(repo.path), []);
  assert.deepEqual(await listDir(state.path), []);
});
