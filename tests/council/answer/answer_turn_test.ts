import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import { NARRATION_HOLD_CHARS } from "../../../src/council/answer/answer.ts";
import { EXHAUSTIVENESS_DIRECTIVE } from "../../../src/council/prompt/prompts.ts";
import {
  byAgent,
  collect,
  fakeAgents,
  gate,
  testConfig,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";

/** An answer long enough to stream live (shorter text is held: it may be narration). */
const LONG = "The final answer walks through each step in turn. ".repeat(
  Math.ceil(NARRATION_HOLD_CHARS / 40),
);

const CANDIDATES = {
  "claude:child": { text: "ALPHA answer" },
  "codex:child": { text: "BRAVO answer" },
  "gemini:child": { text: "CHARLIE answer" },
};

function council(file: Parameters<typeof testConfig>[0], script: Parameters<typeof fakeAgents>[0]) {
  const fake = fakeAgents(script);
  const clock = new FakeClock();
  const c = createCouncil({
    config: testConfig(file),
    runAgent: fake.runAgent,
    clock,
    random: () => 0,
  });
  return { ...c, fake, clock };
}

Deno.test("answer turn: councilSize children round-robin, child 0 = agent 0, then agent 0 synthesizes", async () => {
  const { runTurn, fake, clock } = council(
    { councilSize: 4 },
    byAgent({ ...CANDIDATES, "claude:synth": { text: "FINAL" } }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  const children = fake.calls.filter((c) => c.role === "child");
  assert.deepEqual(children.map((c) => c.agent.name), ["claude", "codex", "gemini", "claude"]);
  const synth = fake.calls.filter((c) => c.role === "synth");
  assert.deepEqual(synth.map((c) => c.agent.name), ["claude"]);
  assert.ok(log.progress.some((l) => l.includes("4 agents: claude, codex, gemini, claude#2")));
  assert.deepEqual(log.outcome, { kind: "answer", text: "FINAL" });
  assert.equal(log.usage.calls, 5);
  assert.equal(clock.pending, 0, "every timer cleared");
});

Deno.test("answer turn: children carry the exhaustiveness directive and the conversation", async () => {
  const { runTurn, fake } = council({}, byAgent({ ...CANDIDATES, "claude:synth": { text: "F" } }));
  await collect(
    runTurn(testRequest({ ask: "Explain the cache layer" }), new AbortController().signal),
  );
  for (const call of fake.calls.filter((c) => c.role === "child")) {
    assert.ok(call.prompt.includes(EXHAUSTIVENESS_DIRECTIVE));
    assert.ok(call.prompt.includes("Explain the cache layer"));
    assert.ok(call.prompt.includes("You are a coding assistant."));
  }
});

Deno.test("answer turn: the synthesizer sees anonymised candidates in shuffled order", async () => {
  const orders: string[][] = [];
  for (const random of [() => 0, () => 0.99]) {
    const fake = fakeAgents(byAgent({ ...CANDIDATES, "claude:synth": { text: "F" } }));
    const { runTurn } = createCouncil({
      config: testConfig(),
      runAgent: fake.runAgent,
      clock: new FakeClock(),
      random,
    });
    await collect(runTurn(testRequest(), new AbortController().signal));
    const prompt = fake.calls.find((c) => c.role === "synth")!.prompt;
    for (const name of ["claude", "codex", "gemini"]) {
      assert.ok(!prompt.toLowerCase().includes(name), `synth prompt names ${name}`);
    }
    const order = [...prompt.matchAll(/=== Candidate ([A-Z]) ===\n(\w+) answer/g)].map((m) =>
      `${m[1]}=${m[2]}`
    );
    assert.equal(order.length, 3);
    orders.push(order);
  }
  // random() = 0 rotates (Fisher–Yates swaps with index 0); 0.99 keeps the child order.
  assert.deepEqual(orders[0], ["A=BRAVO", "B=CHARLIE", "C=ALPHA"]);
  assert.deepEqual(orders[1], ["A=ALPHA", "B=BRAVO", "C=CHARLIE"]);
});

Deno.test("answer turn: synthesizer text streams live; recap closes progress before the first delta", async () => {
  const release = gate();
  const { runTurn } = council(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": {
        early: [LONG, "and so "],
        deltas: ["on."],
        text: `${LONG}and so on.`,
        gate: release.promise,
      },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.until((e) => e.type === "answer_delta" && e.text === "and so ");
  assert.ok(!watcher.events.some((e) => e.type === "done"), "deltas arrive while synth runs");
  release.open();
  const log = await watcher.finished;
  assert.equal(log.deltas.join(""), `${LONG}and so on.`);
  assert.deepEqual(log.outcome, { kind: "answer", text: `${LONG}and so on.` });
  const firstDelta = log.events.findIndex((e) => e.type === "answer_delta");
  const beforeDelta = log.events[firstDelta - 1];
  assert.equal(beforeDelta.type, "progress");
  assert.match(
    (beforeDelta as { text: string }).text,
    /^council: 3 agents \(claude, codex, gemini\) · \d+\.\ds · 4 calls · \$0\.0300 so far · writing the answer from 3 candidates$/,
  );
  assert.ok(
    log.events.slice(firstDelta).every((e) => e.type !== "progress"),
    "no progress after the answer starts",
  );
});

Deno.test("answer turn: a lone child's text is the answer, streamed live", async () => {
  const release = gate();
  const { runTurn, fake } = council(
    { fanOutPolicy: "never" },
    byAgent({
      claude: { early: [LONG], deltas: ["Done."], text: `${LONG}Done.`, gate: release.promise },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.until((e) => e.type === "answer_delta");
  assert.ok(!watcher.events.some((e) => e.type === "done"), "the answer streams while it runs");
  release.open();
  const log = await watcher.finished;
  assert.equal(fake.calls.length, 1);
  assert.equal(fake.calls[0].role, "child");
  assert.deepEqual(log.deltas, [LONG, "Done."]);
  assert.deepEqual(log.outcome, { kind: "answer", text: `${LONG}Done.` });
  assert.ok(
    log.progress.some((l) => l.startsWith("consulting one agent: claude — fanOutPolicy never")),
  );
  assert.match(log.progress.at(-1)!, /^council: 1 agent \(claude\) · /);
});

Deno.test("answer turn: final text not carried by deltas is still sent", async () => {
  const { runTurn } = council(
    { fanOutPolicy: "never" },
    byAgent({ claude: { deltas: [], text: "Only in the result" } }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.equal(log.deltas.join(""), "Only in the result");
  assert.equal(log.outcome.kind === "answer" && log.outcome.text, "Only in the result");
});

Deno.test("answer turn: a failed synthesizer hands over to the next agent", async () => {
  const { runTurn, fake } = council(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": { ok: false, error: "claude: exit 1: rate limited" },
      "codex:synth": { text: "codex synthesis" },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.deepEqual(
    fake.calls.filter((c) => c.role === "synth").map((c) => c.agent.name),
    ["claude", "codex"],
  );
  assert.deepEqual(log.outcome, { kind: "answer", text: "codex synthesis" });
  assert.ok(
    log.progress.some((l) => l.includes("claude (synth): failed") && l.includes("rate limited")),
  );
});

Deno.test("answer turn: a synthesizer failing mid-stream is followed by a full fresh answer", async () => {
  const { runTurn } = council(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": { deltas: [LONG], text: LONG, ok: false, error: "claude: killed" },
      "codex:synth": { text: "complete answer" },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  const text = log.deltas.join("");
  assert.equal(log.outcome.kind === "answer" && log.outcome.text, text);
  assert.ok(text.startsWith(LONG));
  assert.ok(text.endsWith("complete answer"));
  assert.ok(text.includes("codex writes it again"));
});

Deno.test("answer turn: no synthesizer works → the best candidate with a note", async () => {
  const { runTurn, fake } = council(
    {},
    byAgent({ ...CANDIDATES, "*:synth": { ok: false, error: "synth broke" } }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 3);
  assert.equal(log.outcome.kind, "answer");
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.ok(text.startsWith("ALPHA answer"));
  assert.match(text, /could not combine.*claude's answer unchanged/s);
  assert.equal(log.deltas.join(""), text);
});

Deno.test("answer turn: failed children are left out; synth fallbacks skip agents that failed", async () => {
  const { runTurn, fake } = council(
    {},
    byAgent({
      "claude:child": { text: "ALPHA answer" },
      "codex:child": { ok: false, error: "codex: timed out after 600s", timedOut: true },
      "gemini:child": { text: "CHARLIE answer" },
      "*:synth": { ok: false, error: "down" },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  const synthCalls = fake.calls.filter((c) => c.role === "synth");
  assert.deepEqual(synthCalls.map((c) => c.agent.name), ["claude", "gemini"]);
  assert.ok(!synthCalls[0].prompt.includes("Candidate C"), "two candidates only");
  assert.ok(
    log.progress.some((l) => l.startsWith("codex: failed after") && l.includes("timed out")),
  );
});

Deno.test("answer turn: a single surviving candidate still goes through the synthesizer (§6.5)", async () => {
  const { runTurn, fake } = council(
    {},
    byAgent({
      "claude:child": { ok: false, error: "claude: exit 2" },
      "codex:child": { text: "BRAVO answer" },
      "gemini:child": { text: "   " },
      "claude:synth": { text: "BRAVO, checked" },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  const synth = fake.calls.filter((c) => c.role === "synth");
  assert.equal(synth.length, 1);
  assert.match(synth[0].prompt, /BRAVO answer/);
  assert.deepEqual(log.outcome, { kind: "answer", text: "BRAVO, checked" });
  assert.equal(log.deltas.join(""), "BRAVO, checked");
});

Deno.test("answer turn: every child failed → a normal answer naming each failure", async () => {
  const { runTurn, fake } = council(
    {},
    byAgent({
      "claude:child": { ok: false, error: "claude: exit 1: not logged in" },
      "codex:child": { ok: false, error: "codex: exit 127: command not found" },
      "gemini:child": { throws: true },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0);
  assert.equal(log.outcome.kind, "answer");
  const text = log.outcome.kind === "answer" ? log.outcome.text : "";
  assert.match(text, /- claude: exit 1: not logged in/);
  assert.match(text, /- codex: exit 127: command not found/);
  assert.match(text, /- gemini: Error: runner exploded/);
  // Not streamed as answer text: the turn is flagged failed so Responses can say so.
  assert.deepEqual(log.deltas, []);
  assert.equal(log.failed, true);
});

Deno.test("answer turn: a turn where some child answered is not flagged failed", async () => {
  const { runTurn } = council(
    {},
    byAgent({
      "claude:child": { ok: false, error: "claude: exit 1: not logged in" },
      "codex:child": { text: "BRAVO" },
      "gemini:child": { ok: false, error: "gemini: exit 1" },
      "claude:synth": { text: "BRAVO, synthesized" },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.equal(log.failed, false);
  assert.equal(log.outcome.kind === "answer" && log.outcome.text, "BRAVO, synthesized");
});

Deno.test("answer turn: interleaved child text goes to progress only, never into the answer", async () => {
  const { runTurn } = council(
    { progressDetail: "interleaved" },
    byAgent({
      "claude:child": { deltas: ["ALPHA line one\nALPHA ", "line two"], text: "ALPHA" },
      "codex:child": { text: "BRAVO" },
      "gemini:child": { text: "CHARLIE" },
      "claude:synth": { text: "SYNTH" },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.ok(log.progress.includes("claude: ALPHA line one"));
  assert.ok(log.progress.includes("claude: ALPHA line two"));
  assert.ok(log.progress.includes("codex: BRAVO"));
  assert.equal(log.deltas.join(""), "SYNTH");
  assert.ok(!log.progress.some((l) => l.includes("SYNTH")));
});

Deno.test("answer turn: telemetry mode keeps child text out of progress", async () => {
  const { runTurn } = council({}, byAgent({ ...CANDIDATES, "claude:synth": { text: "S" } }));
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.ok(!log.progress.some((l) => l.includes("BRAVO")));
});

Deno.test("answer turn: usage sums every call; cwd and credentials are passed per config", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fake = fakeAgents(byAgent({
      ...CANDIDATES,
      "claude:synth": { text: "S", usage: { inputTokens: 1000, outputTokens: 10, costUsd: 0.5 } },
    }));
    const { runTurn } = createCouncil({
      config: testConfig({ passApiKeys: false }),
      runAgent: fake.runAgent,
      clock: new FakeClock(),
    });
    const request = testRequest({ cwd: dir, hostCredentials: { ANTHROPIC_API_KEY: "k" } });
    const log = await collect(runTurn(request, new AbortController().signal));
    assert.deepEqual(log.usage, {
      inputTokens: 1300,
      outputTokens: 160,
      usd: 0.53,
      calls: 4,
      wallMs: 0,
    });
    assert.ok(fake.calls.every((c) => c.options.cwd === dir));
    assert.ok(fake.calls.every((c) => c.options.hostCredentials === undefined));

    const passing = fakeAgents(byAgent({ ...CANDIDATES, "claude:synth": { text: "S" } }));
    await collect(
      createCouncil({
        config: testConfig({ passApiKeys: true }),
        runAgent: passing.runAgent,
        clock: new FakeClock(),
      }).runTurn(
        testRequest({ hostCredentials: { ANTHROPIC_API_KEY: "k" } }),
        new AbortController().signal,
      ),
    );
    assert.ok(passing.calls.every((c) => c.options.hostCredentials?.ANTHROPIC_API_KEY === "k"));
    assert.ok(
      passing.calls.every((c) => c.options.cwd === undefined),
      "no cwd → runner's temp dir",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cancellation: aborting the signal aborts every child at once and ends the turn", async () => {
  const { runTurn, fake, clock } = council({}, byAgent({ "*:child": { hang: true } }));
  const controller = new AbortController();
  const watcher = new TurnWatcher(runTurn(testRequest(), controller.signal));
  while (fake.active < 3) await new Promise((r) => setTimeout(r, 0));
  controller.abort();
  const log = await watcher.finished;
  assert.equal(fake.active, 0);
  assert.ok(fake.calls.every((c) => c.options.signal?.aborted));
  assert.equal(fake.calls.filter((c) => c.role === "synth").length, 0);
  assert.equal(log.outcome.kind, "answer");
  assert.match(log.outcome.kind === "answer" ? log.outcome.text : "", /cancelled/);
  assert.equal(clock.pending, 0);
});

Deno.test("cancellation: a consumer that stops reading aborts and awaits every child", async () => {
  const { runTurn, fake, clock } = council({}, byAgent({ "*:child": { hang: true } }));
  const stream = runTurn(testRequest(), new AbortController().signal);
  for await (const event of stream) {
    if (event.type === "progress" && event.text.startsWith("consulting")) break;
  }
  assert.equal(fake.active, 0, "children ended before the loop exited");
  assert.ok(fake.calls.every((c) => c.options.signal?.aborted));
  assert.equal(clock.pending, 0);
});

Deno.test("cancellation: an already-aborted signal runs no agents to completion", async () => {
  const { runTurn, fake } = council({}, byAgent({ "*": { hang: true } }));
  const controller = new AbortController();
  controller.abort();
  const log = await collect(runTurn(testRequest(), controller.signal));
  assert.equal(fake.active, 0);
  assert.match(log.outcome.kind === "answer" ? log.outcome.text : "", /cancelled/);
});

Deno.test("answer turn: a synthesizer's narration before its tool use goes to progress, not the answer", async () => {
  const { runTurn } = council(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": {
        early: ["Let me check the candidates against the code."],
        activities: ["Read src/parser.ts"],
        deltas: ["\n\nThe parser ", "drops empty rows."],
        text: "The parser drops empty rows.",
      },
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.deepEqual(log.outcome, { kind: "answer", text: "The parser drops empty rows." });
  assert.equal(log.deltas.join(""), "The parser drops empty rows.");
  assert.ok(
    log.progress.includes("claude (synth): Let me check the candidates against the code."),
    log.progress.join("\n"),
  );
});
