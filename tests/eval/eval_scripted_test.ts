/**
 * `eval` end to end with a scripted council: fake member CLIs propose the right or the wrong
 * Write for each task, a fake host carries the chosen call out through the arm's real gateway,
 * and the hidden check decides; the report must give exactly the pass counts that follow.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evalCommand } from "../../src/eval/mod.ts";
import { readResults } from "../../src/eval/results.ts";
import { fakeAgent, type FakeRule } from "../fixtures/fakes.ts";
import { readSeatRecords } from "../../src/ledger/records_file.ts";
import { seats } from "../../src/ledger/seats.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const FAKE_HOST = fileURLToPath(new URL("./fake_host.mjs", import.meta.url));

/** The Write a member proposes for a task: the right or the wrong content. */
const write = (content: string) =>
  JSON.stringify({ kind: "tool", name: "Write", input: { file_path: "answer.txt", content } });

/** Which tasks each member solves; every other task gets its wrong fix. */
const SOLVES: Record<string, string[]> = {
  alpha: ["task-a", "task-b"],
  beta: ["task-b", "task-c"],
};
const TASKS = ["task-a", "task-b", "task-c"];

function memberRules(member: string): FakeRule[] {
  return [
    // As synthesizer: take whichever proposal carries a right fix.
    { match: "Proposal 1 \\(made by[^\\n]*RIGHT", reply: '{"choose": 1}' },
    { match: "Proposal 2 \\(made by[^\\n]*RIGHT", reply: '{"choose": 2}' },
    // The host's continuation after the write: done.
    { match: "WROTE-OK", reply: '{"kind":"answer","text":"done"}' },
    ...TASKS.map((task) => ({
      match: `Please fix ${task}\\b`,
      reply: write(SOLVES[member].includes(task) ? `RIGHT ${task}` : `WRONG by ${member}`),
      costUsd: 0.01,
    })),
  ];
}

async function writeSuite(root: string): Promise<string> {
  const suite = join(root, "suite");
  for (const task of TASKS) {
    await Deno.mkdir(join(suite, task, "workspace"), { recursive: true });
    await Deno.writeTextFile(join(suite, task, "workspace", "answer.txt"), "unsolved\n");
    // The check is hidden from the workspace: it lives beside it, in the task directory.
    await Deno.writeTextFile(join(suite, task, "expected.txt"), `RIGHT ${task}`);
    await Deno.writeTextFile(
      join(suite, task, "task.yaml"),
      `prompt: Please fix ${task} by writing answer.txt\n` +
        `check: cmp -s answer.txt "$TASK_DIR/expected.txt"\ntimeoutSec: 10\n`,
    );
  }
  return suite;
}

async function writeConfig(root: string): Promise<string> {
  const agents = ["alpha", "beta"].map((name) =>
    fakeAgent("claude", { rules: memberRules(name) }, { name })
  );
  const config = {
    fanOutPolicy: "always",
    logLevel: "warn",
    quorum: { minAnswers: 0 },
    defaultAgents: agents,
  };
  const file = join(root, "council.yaml");
  await Deno.writeTextFile(file, JSON.stringify(config));
  return file;
}

function io(root: string, out: string[], err: string[]) {
  return {
    env: (name: string) => Deno.env.get(name),
    cwd: root,
    stdout: (text: string) => void out.push(text),
    stderr: (text: string) => void err.push(text),
  };
}

Deno.test("eval reports exactly the pass counts the scripted members earn", async () => {
  const root = await Deno.makeTempDir({ prefix: "eval-scripted-" });
  try {
    const suite = await writeSuite(root);
    const config = await writeConfig(root);
    const out: string[] = [];
    const err: string[] = [];
    const argv = [
      suite,
      "--config",
      config,
      "--arm",
      "council",
      "--arm",
      "solo:alpha",
      "--arm",
      "solo:beta",
      "--arm",
      "best-of:alpha:2",
      "--host-command",
      FAKE_HOST,
      "--concurrency",
      "4",
      "--out",
      "out",
      "--json",
    ];
    const deps = {
      self: { command: Deno.execPath(), args: ["run", "-A", MAIN] },
      signal: new AbortController().signal,
      terminal: false,
    };
    const code = await evalCommand(argv, io(root, out, err), {}, deps);
    assert.equal(code, 0, err.join(""));
    const report = JSON.parse(out.join(""));
    const passed = Object.fromEntries(
      report.arms.map((a: { arm: string; passed: number }) => [a.arm, a.passed]),
    );
    assert.deepEqual(passed, { council: 3, "solo:alpha": 2, "solo:beta": 2, "best-of:alpha:2": 2 });
    const results = readResults(join(root, "out", "results.jsonl"));
    assert.equal(results.length, 12);
    const solvedBy = (arm: string) =>
      results.filter((r) => r.arm === arm && r.passed).map((r) => r.task).sort();
    assert.deepEqual(solvedBy("solo:beta"), ["task-b", "task-c"]);
    for (const r of results) assert.ok(r.turns >= 2 && r.usd > 0, JSON.stringify(r));
    const [first] = report.pairs;
    assert.equal(first.a, "council");
    assert.equal(first.onlyA, 1);
    assert.equal(first.onlyB, 0);

    // The council's runs' ledgers: seats count exactly who was chosen and what became of it.
    const records = TASKS.flatMap((task) =>
      readSeatRecords(join(root, "out", "logs", `council--${task}--1.ledger.jsonl`))
    );
    const seat = Object.fromEntries(
      seats(records, "all", Date.now(), ["alpha", "beta"]).map((r) => [r.agent, r]),
    );
    // task-a: alpha alone right and picked; task-b: both right, alpha credited, beta agreeing;
    // task-c: beta alone right and picked. Every chosen write ran fine (the host's result).
    const figures = (agent: string) => {
      const { turns, valid, chosen, chosenOk, chosenError, chosenRejected, agreed, decisive } =
        seat[agent];
      return { turns, valid, chosen, chosenOk, chosenError, chosenRejected, agreed, decisive };
    };
    assert.deepEqual(figures("alpha"), {
      turns: 6, // three fanned out, three continuations alone
      valid: 3,
      chosen: 2,
      chosenOk: 2,
      chosenError: 0,
      chosenRejected: 0,
      agreed: 2,
      decisive: 1,
    });
    assert.deepEqual(figures("beta"), {
      turns: 3,
      valid: 3,
      chosen: 1,
      chosenOk: 1,
      chosenError: 0,
      chosenRejected: 0,
      agreed: 2,
      decisive: 1,
    });

    // Rerunning resumes: nothing left to run, the same report.
    const again: string[] = [];
    assert.equal(await evalCommand(argv, io(root, again, []), {}, deps), 0);
    assert.deepEqual(JSON.parse(again.join("")), report);
    assert.equal(readResults(join(root, "out", "results.jsonl")).length, 12);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a hanging check is killed at its time limit and the run counts as failed", async () => {
  const root = await Deno.makeTempDir({ prefix: "eval-hang-" });
  try {
    const task = join(root, "suite", "task-b");
    await Deno.mkdir(join(task, "workspace"), { recursive: true });
    await Deno.writeTextFile(
      join(task, "task.yaml"),
      "prompt: Please fix task-b now\ncheck: sleep 30\ntimeoutSec: 1\n",
    );
    const config = await writeConfig(root);
    const out: string[] = [];
    const err: string[] = [];
    const started = Date.now();
    const code = await evalCommand(
      [task, "--config", config, "--arm", "solo:beta", "--host-command", FAKE_HOST, "--json"],
      io(root, out, err),
      {},
      {
        self: { command: Deno.execPath(), args: ["run", "-A", MAIN] },
        signal: new AbortController().signal,
        terminal: false,
      },
    );
    assert.equal(code, 0, err.join(""));
    assert.ok(Date.now() - started < 25_000);
    const [result] = readResults(join(root, "eval-out", "results.jsonl"));
    assert.equal(result.passed, false);
    assert.equal(result.error, "check timed out after 1 s");
    assert.equal(JSON.parse(out.join("")).arms[0].passed, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a missing host CLI is named with its npm package", async () => {
  const root = await Deno.makeTempDir({ prefix: "eval-nohost-" });
  try {
    const suite = await writeSuite(root);
    const config = await writeConfig(root);
    const noPath = {
      ...io(root, [], []),
      env: (name: string) => name === "PATH" ? root : undefined,
    };
    await assert.rejects(
      evalCommand([suite, "--config", config, "--arm", "council"], noPath, {}, {
        signal: new AbortController().signal,
      }),
      /host CLI claude was not found on PATH: install it with 'npm install -g @anthropic-ai\/claude-code'/,
    );
    await assert.rejects(
      evalCommand([suite, "--config", config, "--host", "codex"], noPath, {}, {
        signal: new AbortController().signal,
      }),
      /host CLI codex was not found on PATH: install it with 'npm install -g @openai\/codex'/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an interrupted eval keeps its finished runs and a rerun does only the rest", async () => {
  const root = await Deno.makeTempDir({ prefix: "eval-interrupt-" });
  try {
    const suite = await writeSuite(root);
    const config = await writeConfig(root);
    const results = join(root, "eval-out", "results.jsonl");
    const argv = [suite, "--config", config, "--arm", "solo:alpha", "--host-command", FAKE_HOST];
    const self = { command: Deno.execPath(), args: ["run", "-A", MAIN] };
    const interrupt = new AbortController();
    const err: string[] = [];
    const running = evalCommand(argv, io(root, [], err), {}, {
      self,
      signal: interrupt.signal,
      terminal: false,
    });
    for (let i = 0; i < 600 && readResults(results).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    interrupt.abort();
    assert.equal(await running, 130);
    assert.match(err.join(""), /interrupted: finished runs are kept/);
    const kept = readResults(results);
    assert.ok(kept.length >= 1 && kept.length < 3, `${kept.length}`);

    const resumed: string[] = [];
    const code = await evalCommand(argv, io(root, [], resumed), {}, {
      self,
      signal: new AbortController().signal,
      terminal: false,
    });
    assert.equal(code, 0);
    assert.match(resumed.join(""), new RegExp(`resuming: ${kept.length} runs already`));
    const all = readResults(results);
    assert.deepEqual(all.map((r) => r.task).sort(), TASKS);
    assert.deepEqual(all.slice(0, kept.length), kept);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a git workspace: each run starts from a copy checked out at the task's commit", async () => {
  const root = await Deno.makeTempDir({ prefix: "eval-git-" });
  try {
    const task = join(root, "suite", "pinned");
    const work = join(task, "workspace");
    await Deno.mkdir(work, { recursive: true });
    const git = async (...args: string[]) => {
      const out = await new Deno.Command("git", {
        args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
        cwd: work,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      return new TextDecoder().decode(out.stdout).trim();
    };
    await git("init", "-q");
    await Deno.writeTextFile(join(work, "version.txt"), "v1\n");
    await git("add", ".");
    await git("commit", "-qm", "one");
    const first = await git("rev-parse", "HEAD");
    await Deno.writeTextFile(join(work, "version.txt"), "v2\n");
    await git("commit", "-qam", "two");
    await Deno.writeTextFile(
      join(task, "task.yaml"),
      `prompt: Please look around\ncommit: ${first}\ncheck: grep -qx v1 version.txt\n`,
    );
    const config = await writeConfig(root);
    const err: string[] = [];
    const code = await evalCommand(
      [task, "--config", config, "--arm", "solo:alpha", "--host-command", FAKE_HOST],
      io(root, [], err),
      {},
      {
        self: { command: Deno.execPath(), args: ["run", "-A", MAIN] },
        signal: new AbortController().signal,
        terminal: false,
      },
    );
    assert.equal(code, 0, err.join(""));
    const [result] = readResults(join(root, "eval-out", "results.jsonl"));
    assert.equal(result.passed, true, JSON.stringify(result));
    assert.equal(
      await Deno.readTextFile(join(work, "version.txt")),
      "v2\n",
      "the task is untouched",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
