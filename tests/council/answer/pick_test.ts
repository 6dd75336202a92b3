/**
 * Pick or write: the synthesizer of a fanned-out answer turn sends one candidate as written
 * (`{"choose": "B"}`, decided from its reply's start) or writes the answer itself.
 */
import assert from "node:assert/strict";
import { NARRATION_HOLD_CHARS } from "../../../src/council/answer/answer.ts";
import {
  decideHead,
  PickDecider,
  type PickDecision,
} from "../../../src/council/answer/pick_decider.ts";
import {
  byAgent,
  collect,
  gate,
  recordingCouncil,
  testRequest,
  TurnWatcher,
} from "../../support/scripted_agents.ts";

/** Long enough to stream live (a CLI's shorter text is held: it may be narration). */
const LONG = "Combined: ALPHA and BRAVO, step by step. ".repeat(
  Math.ceil(NARRATION_HOLD_CHARS / 40),
);

const CANDIDATES = {
  "claude:child": { text: "ALPHA answer" },
  "codex:child": { text: "BRAVO answer" },
  "gemini:child": { text: "CHARLIE answer" },
};

/** Feeds `pieces` one by one; what went on, and every decision reported. */
function feed(pieces: string[], count = 3) {
  const decisions: PickDecision[] = [];
  const decider = new PickDecider(count, (d) => decisions.push(d));
  const out = pieces.map((p) => decider.feed(p));
  return { out, flushed: decider.flush(), decisions, decider };
}

Deno.test("pick decider: a leading choice, streamed in pieces, fenced or spaced, is a pick", () => {
  for (
    const pieces of [
      ['{"choose": "B"}'],
      ["{", '"cho', 'ose"', ': "', 'B"', "}"],
      ["  \n", "```json\n", '{ "choose" : 2 }', "\n```"],
      ['`{"choose":"candidate b"}`'],
      ['{"choose": "2"}'],
    ]
  ) {
    const { out, flushed, decisions } = feed(pieces);
    assert.deepEqual(decisions, [{ kind: "picked", index: 1 }], pieces.join(""));
    assert.equal(out.join("") + flushed, "", "nothing of a pick reaches the answer");
  }
});

Deno.test("pick decider: a written answer passes on from its first telling character", () => {
  const { out, decisions } = feed(["The", " answer is 42."]);
  assert.deepEqual(out, ["The", " answer is 42."], "not buffered");
  assert.deepEqual(decisions, [{ kind: "written" }]);
  // A JSON answer is written as soon as it cannot be a choice.
  const json = feed(['{"c', 'ount": 1}']);
  assert.deepEqual(json.out, ["", '{"count": 1}']);
  assert.deepEqual(json.decisions, [{ kind: "written" }]);
  // A code fence opening an answer is held only until its first line shows no choice.
  const code = feed(["```", "ts\nconst x = 1;\n```"]);
  assert.equal(code.out.join(""), "```ts\nconst x = 1;\n```");
});

Deno.test("pick decider: a choice out of range or malformed is invalid, and sends nothing", () => {
  assert.deepEqual(decideHead('{"choose": 4}', 3, false), {
    kind: "invalid",
    reason: "a choice of 4 among 3",
  });
  assert.equal(decideHead('{"choose": "Z"}', 3, false)?.kind, "invalid");
  assert.equal(decideHead('{"choose": 0}', 3, false)?.kind, "invalid");
  assert.equal(decideHead('{"choose": }', 3, false)?.kind, "invalid");
  assert.equal(decideHead('{"choose": "B"', 3, true)?.kind, "invalid", "unfinished at the end");
  assert.equal(decideHead('{"choose": "B"', 3, false), undefined, "still coming");
  const { out, flushed } = feed(['{"choose": 9}']);
  assert.equal(out.join("") + flushed, "");
});

Deno.test("pick decider: after a tool use the reply starts over and may pick", () => {
  const decisions: PickDecision[] = [];
  const decider = new PickDecider(3, (d) => decisions.push(d));
  assert.equal(decider.feed("Let me check the file."), "Let me check the file.");
  assert.equal(decider.flush(), "");
  assert.equal(decider.feed('{"choose": "C"}'), "");
  assert.deepEqual(decisions, [{ kind: "written" }, { kind: "picked", index: 2 }]);
  assert.deepEqual(decider.decision, { kind: "picked", index: 2 });
});

Deno.test("pick: a streamed choice sends the candidate verbatim and ends the synthesizer at once", async () => {
  const { runTurn, fake, records } = recordingCouncil(
    {},
    // The synthesizer never finishes on its own: only the pick's cut ends it.
    byAgent({ ...CANDIDATES, "claude:synth": { early: ['{"cho', 'ose": "B"}'], hang: true } }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  // random 0 shuffles [claude, codex, gemini] to [codex, gemini, claude]: B is gemini.
  assert.deepEqual(log.outcome, { kind: "answer", text: "CHARLIE answer" });
  assert.equal(log.deltas.join(""), "CHARLIE answer");
  assert.ok(log.progress.includes("claude picked gemini's answer"), log.progress.join("\n"));
  assert.match(log.progress.at(-1)!, / · picked gemini's answer$/);
  const synthPrompt = fake.calls.find((c) => c.role === "synth")!.prompt;
  assert.match(synthPrompt, /\{"choose": "<its letter>"\}/);
  assert.deepEqual(records[0].decision.synthesis, {
    kind: "picked",
    agent: "claude",
    picked: "gemini",
    candidates: 3,
  });
  const synthCall = records[0].calls.find((c) => c.role === "synth")!;
  assert.equal(synthCall.ok, true, "a pick is the call's success");
  assert.equal(synthCall.cutOff, undefined);
  assert.equal(log.failed, false);
});

Deno.test("pick: a reply that did not stream is decided whole", async () => {
  const { runTurn, records } = recordingCouncil(
    {},
    // The choice arrives only as the final text (no text events).
    byAgent({ ...CANDIDATES, "claude:synth": { text: '```json\n{"choose": 1}\n```', deltas: [] } }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.deepEqual(log.outcome, { kind: "answer", text: "BRAVO answer" });
  assert.equal(records[0].decision.synthesis?.picked, "codex");
});

Deno.test("pick: a written answer streams live while the synthesizer still writes", async () => {
  const release = gate();
  const { runTurn, records } = recordingCouncil(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": {
        early: ["Comb", LONG.slice(4)],
        text: LONG,
        deltas: [],
        gate: release.promise,
      },
    }),
  );
  const watcher = new TurnWatcher(runTurn(testRequest(), new AbortController().signal));
  await watcher.until((e) => e.type === "answer_delta");
  assert.match(watcher.progress.at(-1)!, / · writing the answer from 3 candidates$/);
  release.open();
  const log = await watcher.finished;
  assert.equal(log.deltas.join(""), LONG);
  assert.deepEqual(records[0].decision.synthesis, {
    kind: "written",
    agent: "claude",
    candidates: 3,
  });
});

Deno.test("pick: a choice naming no candidate falls back to the same agent writing the answer", async () => {
  let synthCalls = 0;
  const { runTurn, fake, records } = recordingCouncil(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": () => (++synthCalls === 1 ? { text: '{"choose": 7}' } : { text: "WRITTEN" }),
    }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.deepEqual(log.outcome, { kind: "answer", text: "WRITTEN" });
  assert.ok(!log.deltas.join("").includes("choose"), "the bad choice never reaches the answer");
  assert.ok(log.progress.some((l) => l.includes("claude replied with a choice of 7 among 3")));
  const prompts = fake.calls.filter((c) => c.role === "synth").map((c) => c.prompt);
  assert.equal(prompts.length, 2);
  assert.ok(!prompts[1].includes('"choose"'), "the second ask is to write");
  assert.equal(records[0].decision.synthesis?.kind, "written");
});

Deno.test("pick: with synthesis: write the synthesizer is never offered a pick, as before", async () => {
  const { runTurn, fake, records } = recordingCouncil(
    { synthesis: "write" },
    byAgent({ ...CANDIDATES, "claude:synth": { text: '{"choose": "B"}' } }),
  );
  const log = await collect(runTurn(testRequest(), new AbortController().signal));
  assert.ok(!fake.calls.find((c) => c.role === "synth")!.prompt.includes('"choose"'));
  // Its reply is its answer, whatever it says.
  assert.deepEqual(log.outcome, { kind: "answer", text: '{"choose": "B"}' });
  assert.equal(records[0].decision.synthesis?.kind, "written");
});

Deno.test("pick: the record names the synthesizer whose answer went out, and none when none did", async () => {
  const fallback = recordingCouncil(
    {},
    byAgent({
      ...CANDIDATES,
      "claude:synth": { text: "half", ok: false, error: "claude: killed" },
      "codex:synth": { text: "complete answer" },
    }),
  );
  await collect(fallback.runTurn(testRequest(), new AbortController().signal));
  assert.deepEqual(fallback.records[0].decision.synthesis, {
    kind: "written",
    agent: "codex",
    candidates: 3,
  });

  const none = recordingCouncil(
    {},
    byAgent({ ...CANDIDATES, "*:synth": { text: "half", ok: false, error: "broke" } }),
  );
  const log = await collect(none.runTurn(testRequest(), new AbortController().signal));
  assert.match(log.outcome.kind === "answer" ? log.outcome.text : "", /could not combine/);
  assert.equal(none.records[0].decision.synthesis, undefined);
  assert.ok(!("synthesis" in none.records[0].decision));
});
