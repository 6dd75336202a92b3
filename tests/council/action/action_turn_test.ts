import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import {
  BASH_TOOL,
  byAgent,
  collect,
  fakeAgents,
  type FakeReply,
  READ_TOOL,
  testConfig,
  testRequest,
} from "../../support/scripted_agents.ts";

const TOOLS = [READ_TOOL, BASH_TOOL];

function run(
  replies: Record<string, FakeReply>,
  file: Parameters<typeof testConfig>[0] = {},
) {
  const fake = fakeAgents(byAgent(replies));
  const clock = new FakeClock();
  const { runTurn } = createCouncil({ config: testConfig(file), runAgent: fake.runAgent, clock });
  const done = collect(runTurn(testRequest({ tools: TOOLS }), new AbortController().signal));
  return { fake, clock, done };
}

const read = (path: string) =>
  JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });

Deno.test("action turn: children get the tool list and must answer with one JSON object", async () => {
  const { fake, done } = run({ "*:child": { text: read("/a") } });
  await done;
  for (const call of fake.calls) {
    assert.ok(call.prompt.includes("- Read: Reads a file"));
    assert.ok(call.prompt.includes('"required":["file_path"]'));
    assert.ok(call.prompt.includes('{"kind":"tool"'));
    assert.ok(call.prompt.includes('{"kind":"answer"'));
  }
});

Deno.test("action turn: unanimous proposals (fences, prose, key order aside) skip the synthesizer", async () => {
  const { fake, done, clock } = run({
    "claude:child": { text: read("/repo/a.ts") },
    "codex:child": {
      text:
        'I will read it.\n```json\n{"input":{"file_path":"/repo/a.ts"},"name":"Read","kind":"tool"}\n```',
    },
    "gemini:child": { text: `Sure: ${read("/repo/a.ts")} — done.` },
  });
  const log = await done;
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0);
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/repo/a.ts" } });
  assert.ok(log.progress.some((l) => l.startsWith("unanimous (3 agents)")));
  assert.equal(log.deltas.length, 0, "tool turns never stream answer deltas");
  assert.match(
    log.progress.at(-1)!,
    /^council: 3 agents \(claude, codex, gemini\) · .* · 3 calls · /,
  );
  assert.equal(log.events.at(-2)?.type, "progress", "recap comes right before done");
  assert.equal(clock.pending, 0);
});

Deno.test("action turn: unknown tools and schema-invalid inputs are dropped and reported", async () => {
  const { fake, done } = run({
    "claude:child": { text: JSON.stringify({ kind: "tool", name: "Delete", input: {} }) },
    "codex:child": { text: JSON.stringify({ kind: "tool", name: "Read", input: { limit: 3 } }) },
    "gemini:child": { text: read("/ok") },
  });
  const log = await done;
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0);
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/ok" } });
  assert.ok(log.progress.some((l) => l === 'claude: proposal dropped: unknown tool "Delete"'));
  assert.ok(
    log.progress.some((l) =>
      l.startsWith("codex: proposal dropped: input does not match Read's schema") &&
      l.includes("file_path")
    ),
  );
});

Deno.test("action turn: the synthesizer's choice is returned verbatim", async () => {
  const codexInput = { file_path: "/b", limit: 20 };
  const { fake, done } = run({
    "claude:child": { text: read("/a") },
    "codex:child": { text: JSON.stringify({ kind: "tool", name: "Read", input: codexInput }) },
    "gemini:child": {
      text: JSON.stringify({ kind: "tool", name: "Bash", input: { command: "ls" } }),
    },
    "claude:synth": { text: 'Proposal 2 is best.\n{"choose": 2}' },
  });
  const log = await done;
  const synth = fake.calls.filter((c) => c.role === "synth");
  assert.equal(synth.length, 1);
  assert.ok(
    synth[0].prompt.includes(
      `Proposal 2 (made by 1 of 3): ${
        JSON.stringify({ kind: "tool", name: "Read", input: codexInput })
      }`,
    ),
  );
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: codexInput });
  assert.equal(log.deltas.length, 0);
});

Deno.test("action turn: the synthesizer may answer instead of calling a tool", async () => {
  const { done } = run({
    "claude:child": { text: read("/a") },
    "codex:child": { text: read("/b") },
    "gemini:child": { text: read("/c") },
    "claude:synth": { text: '{"kind":"answer","text":"All done, nothing to read."}' },
  });
  const log = await done;
  assert.deepEqual(log.outcome, { kind: "answer", text: "All done, nothing to read." });
  assert.equal(log.deltas.length, 0, "answers on tool turns arrive whole in done");
});

Deno.test("action turn: a synthesizer mixing proposals is ignored → most-proposed action", async () => {
  const { done } = run({
    "claude:child": { text: read("/a") },
    "codex:child": {
      text: JSON.stringify({ kind: "tool", name: "Bash", input: { command: "ls" } }),
    },
    "gemini:child": {
      text: JSON.stringify({ kind: "tool", name: "Bash", input: { command: "ls" } }),
    },
    "claude:synth": {
      text: JSON.stringify({ kind: "tool", name: "Bash", input: { command: "cat /a" } }),
    },
  });
  const log = await done;
  assert.deepEqual(log.outcome, { kind: "tool", name: "Bash", input: { command: "ls" } });
  assert.ok(log.progress.some((l) => l.startsWith("falling back to the most-proposed action")));
});

Deno.test("action turn: unusable synth reply → most-proposed; ties go to the lowest child", async () => {
  const unusable = ["I like the second one.", '{"choose": 7}', ""];
  for (const reply of unusable) {
    const { done } = run({
      "claude:child": { text: read("/a") },
      "codex:child": { text: read("/b") },
      "gemini:child": { text: `{"kind":"answer","text":"stop here"}` },
      "claude:synth": { text: reply },
    });
    const log = await done;
    assert.deepEqual(
      log.outcome,
      { kind: "tool", name: "Read", input: { file_path: "/a" } },
      reply,
    );
  }
});

Deno.test("action turn: a failed synthesizer hands over to the next agent", async () => {
  const { fake, done } = run({
    "claude:child": { text: read("/a") },
    "codex:child": { text: read("/b") },
    "gemini:child": { text: read("/b") },
    "claude:synth": { ok: false, error: "claude: exit 1" },
    "codex:synth": { text: '{"choose": 1}' },
  });
  const log = await done;
  assert.deepEqual(fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name), [
    "claude",
    "codex",
  ]);
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/a" } });
});

Deno.test("action turn: choosing an answer proposal returns its text verbatim", async () => {
  const { done } = run({
    "claude:child": { text: read("/a") },
    "codex:child": { text: '{"kind":"answer","text":"The bug is in parse()."}' },
    "gemini:child": { ok: false },
    "claude:synth": { text: '{"choose": "2"}' },
  });
  const log = await done;
  assert.deepEqual(log.outcome, { kind: "answer", text: "The bug is in parse()." });
});

Deno.test("action turn: no valid proposal and no prose → an answer listing every failure", async () => {
  const { done } = run({
    "claude:child": { ok: false, error: "claude: exit 1: auth" },
    "codex:child": { text: JSON.stringify({ kind: "tool", name: "Nope", input: {} }) },
    "gemini:child": { ok: false, error: "gemini: timed out", timedOut: true },
  });
  const log = await done;
  assert.equal(log.outcome.kind, "answer");
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.match(text, /- claude: exit 1: auth/);
  assert.doesNotMatch(text, /claude: claude:/, "the agent is named once");
  assert.match(text, /codex: proposal dropped: unknown tool "Nope"/);
  assert.match(text, /- gemini: timed out/);
});

Deno.test("action turn: prose from a child that ignored the format is the last resort", async () => {
  const { done } = run({
    "claude:child": { text: "The file looks fine to me." },
    "codex:child": { ok: false },
    "gemini:child": { ok: false },
  });
  const log = await done;
  assert.deepEqual(log.outcome, { kind: "answer", text: "The file looks fine to me." });
});

Deno.test("action turn: malformed JSON is never shown to the user as an answer", async () => {
  const { done } = run({
    "claude:child": { text: '{"action": "read", "path": "/a"}' },
    "codex:child": { ok: false },
    "gemini:child": { ok: false },
  });
  const log = await done;
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.match(text, /could not produce an answer/);
  assert.match(text, /claude: replied without an action object/);
});

Deno.test("action turn: a single child (policy never) proposes; no synthesizer", async () => {
  const { fake, done } = run(
    { "claude:child": { text: read("/solo") } },
    { fanOutPolicy: "never" },
  );
  const log = await done;
  assert.equal(fake.calls.length, 1);
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/solo" } });
  assert.ok(log.progress.some((l) => l.startsWith("one valid proposal")));
});
