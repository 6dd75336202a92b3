/**
 * Outcome signals through real council turns: who proposed the chosen call, votes and valid
 * proposals on the turn's record, the chosen call's tool_use id on `done`, and the host's next
 * request resolving it as ok, error or rejected (other ids and a lone child's call: nothing).
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import type { TurnJournal } from "../../../src/council/journal.ts";
import type { TurnRecord } from "../../../src/council/records.ts";
import type { ResolvedCall } from "../../../src/council/action/outcome_signals.ts";
import type { TranscriptEntry, TurnEvent } from "../../../src/council/types.ts";
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
const read = (path: string) =>
  JSON.stringify({ kind: "tool", name: "Read", input: { file_path: path } });

function council(replies: Record<string, FakeReply>, file: Parameters<typeof testConfig>[0] = {}) {
  const ended: TurnRecord[] = [];
  const resolved: { session: string; call: ResolvedCall }[] = [];
  const journal: TurnJournal = {
    started: () => {},
    called: () => {},
    ended: (record) => void ended.push(record),
    resolved: (session, call) => void resolved.push({ session, call }),
  };
  const fake = fakeAgents(byAgent(replies));
  const { runTurn } = createCouncil({
    config: testConfig(file),
    runAgent: fake.runAgent,
    clock: new FakeClock(),
    journal,
  });
  const turn = async (transcript?: TranscriptEntry[]) => {
    const log = await collect(
      runTurn(
        testRequest({ tools: TOOLS, transcript, sessionKey: "s1", continuation: !!transcript }),
        new AbortController().signal,
      ),
    );
    const done = log.events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    return { log, done, record: ended.at(-1)! };
  };
  return { turn, resolved };
}

/** The host's next request: the chosen call and its result. */
const after = (id: string, text: string, isError = false): TranscriptEntry[] => [
  { kind: "user", text: "Refactor the parser module to remove duplication" },
  { kind: "tool_call", id, name: "Read", input: { file_path: "/b" } },
  { kind: "tool_result", id, text, isError },
];

const SPLIT = {
  "claude:child": { text: read("/a") },
  "codex:child": { text: read("/b") },
  "gemini:child": { text: "not json at all, sorry" },
  "claude:synth": { text: '{"choose": 2}' },
};

Deno.test("signals: the chosen call, its proposer, votes and each child's proposal are recorded", async () => {
  const { turn } = council(SPLIT);
  const { log, done, record } = await turn();
  assert.deepEqual(log.outcome, { kind: "tool", name: "Read", input: { file_path: "/b" } });
  assert.match(done.toolUseId!, /^toolu_cgw_/);
  assert.deepEqual(record.chosen, {
    agent: "codex",
    label: "codex",
    toolUseId: done.toolUseId,
    tool: "Read",
    votes: 1,
    proposals: 3,
    valid: 2,
  });
  const child = (agent: string) =>
    record.calls.find((c) => c.agent === agent && c.role === "child");
  assert.deepEqual(
    [child("claude")?.proposal, child("claude")?.agreed, child("claude")?.chosen],
    ["valid", false, undefined],
  );
  assert.deepEqual([child("codex")?.proposal, child("codex")?.agreed, child("codex")?.chosen], [
    "valid",
    true,
    true,
  ]);
  assert.equal(child("gemini")?.proposal, "invalid");
  assert.equal(record.calls.find((c) => c.role === "synth")?.chosen, undefined);
});

Deno.test("signals: unanimous proposals credit the first proposer with every vote", async () => {
  const { turn } = council({ "*:child": { text: read("/same") } });
  const { record } = await turn();
  assert.equal(record.chosen?.agent, "claude");
  assert.equal(record.chosen?.votes, 3);
  assert.equal(record.calls.filter((c) => c.agreed).length, 3);
  assert.equal(record.calls.filter((c) => c.chosen).length, 1);
});

Deno.test("signals: the next request's result resolves the chosen call as ok, error or rejected", async () => {
  const { turn, resolved } = council({
    ...SPLIT,
    // The continuation answers (a lone child: fanOutScope first-turn).
    "claude:child": { text: '{"kind":"answer","text":"done"}' },
  });
  const first = await council(SPLIT).turn();
  const id = first.done.toolUseId!;
  const turnId = first.record.turnId;
  await turn(after(id, "1\tcontents"));
  await turn(after(id, "Exit code 1\nboom", true));
  await turn(
    after(
      id,
      "The user doesn't want to proceed with this tool use. The tool use was rejected.",
      true,
    ),
  );
  assert.deepEqual(resolved.map((r) => [r.session, r.call.turn, r.call.toolUseId, r.call.result]), [
    ["s1", turnId, id, "ok"],
    ["s1", turnId, id, "error"],
    ["s1", turnId, id, "rejected"],
  ]);
});

Deno.test("signals: results for other ids, and a lone child's call, resolve nothing", async () => {
  const { turn, resolved } = council({ "*:child": { text: read("/x") } }, {
    fanOutPolicy: "never",
  });
  const single = await turn();
  assert.equal(single.done.toolUseId, undefined, "a lone child's call is not a council's choice");
  assert.equal(single.record.chosen, undefined);
  await turn(after("toolu_01HostMintedOrOurs", "fine"));
  assert.deepEqual(resolved, []);
});

Deno.test("signals: a continuation run by one child records no proposal, vote or choice", async () => {
  const { turn } = council({ "*:child": { text: read("/x") } }, { fanOutScope: "first-turn" });
  const { record, done } = await turn(after("toolu_01Host", "fine"));
  assert.equal(record.decision.kind, "single");
  assert.equal(done.toolUseId, undefined);
  assert.equal(record.chosen, undefined);
  assert.ok(record.calls.every((c) => c.proposal === undefined && c.chosen === undefined));
});
