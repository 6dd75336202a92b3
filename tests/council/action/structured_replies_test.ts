import assert from "node:assert/strict";
import {
  canonicalJson,
  extractJsonObjects,
  mostProposed,
  parseChoice,
  parseJudgeVerdict,
  parseProposal,
  readReply,
  resolveChoice,
  tally,
  ToolChecker,
} from "../../../src/council/action/structured_replies.ts";
import { BASH_TOOL, READ_TOOL } from "../../support/scripted_agents.ts";

Deno.test("extractJsonObjects: bare, fenced, in prose, with braces inside strings", () => {
  assert.deepEqual(extractJsonObjects('{"a":1}'), [{ a: 1 }]);
  assert.deepEqual(extractJsonObjects('Here:\n```json\n{"a":"}{"}\n```\nand {"b":[{"c":2}]}'), [
    { a: "}{" },
    { b: [{ c: 2 }] },
  ]);
  assert.deepEqual(extractJsonObjects('set {x} then {"ok":true}'), [{ ok: true }]);
  assert.deepEqual(extractJsonObjects('{"unterminated": '), []);
  assert.deepEqual(extractJsonObjects('escaped {"q":"a \\" } b"}'), [{ q: 'a " } b' }]);
});

Deno.test("parseProposal: tool and answer shapes, tolerant of kind casing and string input", () => {
  assert.deepEqual(parseProposal('{"kind":"tool","name":"Read","input":{"file_path":"/a"}}'), {
    kind: "tool",
    name: "Read",
    input: { file_path: "/a" },
  });
  assert.deepEqual(
    parseProposal('{"kind":"Tool","name":"Read","input":"{\\"file_path\\":\\"/a\\"}"}'),
    {
      kind: "tool",
      name: "Read",
      input: { file_path: "/a" },
    },
  );
  assert.deepEqual(parseProposal('{"kind":"answer","text":"done"}'), {
    kind: "answer",
    text: "done",
  });
  assert.deepEqual(parseProposal('{"name":"Bash","input":{"command":"ls"}}'), {
    kind: "tool",
    name: "Bash",
    input: { command: "ls" },
  });
  assert.deepEqual(parseProposal('{"tool":"Bash","arguments":{"command":"ls"}}'), {
    kind: "tool",
    name: "Bash",
    input: { command: "ls" },
  });
  assert.equal(parseProposal("no json here"), undefined);
  assert.equal(parseProposal('{"kind":"tool","name":"Read","input":[1]}'), undefined);
  assert.equal(parseProposal('{"kind":"answer"}'), undefined);
  // The last proposal wins: an example echoed first is not the answer.
  assert.deepEqual(
    parseProposal('e.g. {"kind":"answer","text":"x"} — mine: {"kind":"tool","name":"Read"}'),
    { kind: "tool", name: "Read", input: {} },
  );
});

Deno.test("parseChoice: choose numbers (also as strings) or an answer object", () => {
  assert.deepEqual(parseChoice('I pick {"choose": 2}'), { kind: "choose", number: 2 });
  assert.deepEqual(parseChoice('{"choose":"3"}'), { kind: "choose", number: 3 });
  assert.deepEqual(parseChoice('{"kind":"answer","text":"t"}'), { kind: "answer", text: "t" });
  assert.equal(parseChoice('{"choose": 1.5}'), undefined);
  assert.equal(parseChoice("proposal 2"), undefined);
});

Deno.test("parseJudgeVerdict: boolean fanOut required; reason optional", () => {
  assert.deepEqual(parseJudgeVerdict('{"fanOut": true, "reason": "hard"}'), {
    fanOut: true,
    reason: "hard",
  });
  assert.deepEqual(parseJudgeVerdict('```\n{"fanOut": false}\n```'), {
    fanOut: false,
    reason: "(no reason given)",
  });
  assert.equal(parseJudgeVerdict('{"fanOut": "yes"}'), undefined);
  assert.equal(parseJudgeVerdict("true"), undefined);
});

Deno.test("ToolChecker: unknown tools, schema violations, empty answers; valid passes", () => {
  const checker = new ToolChecker([READ_TOOL, BASH_TOOL]);
  assert.equal(
    checker.problem({ kind: "tool", name: "Read", input: { file_path: "/a" } }),
    undefined,
  );
  assert.equal(
    checker.problem({ kind: "tool", name: "Write", input: {} }),
    'unknown tool "Write"',
  );
  assert.match(
    checker.problem({ kind: "tool", name: "Read", input: {} })!,
    /Read's schema: .*required property "file_path"/,
  );
  assert.match(
    checker.problem({ kind: "tool", name: "Read", input: { file_path: 3 } })!,
    /Expected "string"/,
  );
  assert.match(
    checker.problem({ kind: "tool", name: "Read", input: { file_path: "/a", x: 1 } })!,
    /additional properties/,
  );
  assert.equal(checker.problem({ kind: "answer", text: " " }), "empty answer");
  assert.equal(checker.problem({ kind: "answer", text: "ok" }), undefined);
});

Deno.test("ToolChecker: a schema the validator cannot compile does not block the tool", () => {
  const checker = new ToolChecker([{
    name: "Odd",
    description: "",
    inputSchema: { $ref: "#/definitions/missing" },
  }]);
  assert.equal(checker.problem({ kind: "tool", name: "Odd", input: { a: 1 } }), undefined);
});

Deno.test("tally / mostProposed: canonical equality, votes, ties to the lowest child", () => {
  assert.equal(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] }), '{"a":[{"c":2,"d":1}],"b":1}');
  const a = { kind: "tool" as const, name: "Read", input: { file_path: "/a", limit: 1 } };
  const aReordered = { kind: "tool" as const, name: "Read", input: { limit: 1, file_path: "/a" } };
  const b = { kind: "tool" as const, name: "Read", input: { file_path: "/b" } };
  const groups = tally([
    { child: 2, proposal: b },
    { child: 0, proposal: a },
    { child: 1, proposal: aReordered },
  ]);
  assert.deepEqual(groups.map((g) => [g.first.child, g.votes]), [[0, 2], [2, 1]]);
  assert.equal(mostProposed([{ child: 1, proposal: b }, { child: 0, proposal: a }])?.child, 0);
  assert.equal(mostProposed([]), undefined);
  // The verbatim object of the first proposer is kept.
  assert.equal(groups[0].first.proposal, a);
});

Deno.test("readReply: valid, dropped with reason, and prose only when no JSON at all", () => {
  const checker = new ToolChecker([READ_TOOL]);
  assert.deepEqual(readReply('{"kind":"tool","name":"Read","input":{"file_path":"/a"}}', checker), {
    kind: "valid",
    proposal: { kind: "tool", name: "Read", input: { file_path: "/a" } },
  });
  assert.deepEqual(readReply('{"kind":"tool","name":"Nope"}', checker), {
    kind: "dropped",
    reason: 'proposal dropped: unknown tool "Nope"',
    prose: false,
  });
  assert.deepEqual(readReply("Looks fine.", checker), {
    kind: "dropped",
    reason: "replied without an action object",
    prose: true,
  });
  assert.equal((readReply('{"verb":"read"}', checker) as { prose: boolean }).prose, false);
});

Deno.test("resolveChoice: by number, an answer, or an exact copy; never a new mix", () => {
  const a = { kind: "tool" as const, name: "Read", input: { file_path: "/a" } };
  const b = { kind: "tool" as const, name: "Bash", input: { command: "ls" } };
  const groups = tally([{ child: 0, proposal: a }, { child: 1, proposal: b }]);
  assert.equal(resolveChoice({ kind: "choose", number: 2 }, groups)?.proposal, b);
  assert.equal(resolveChoice({ kind: "choose", number: 0 }, groups), undefined);
  assert.equal(resolveChoice({ kind: "choose", number: 3 }, groups), undefined);
  assert.deepEqual(resolveChoice({ kind: "answer", text: "t" }, groups)?.proposal, {
    kind: "answer",
    text: "t",
  });
  assert.equal(resolveChoice({ kind: "answer", text: " " }, groups), undefined);
  assert.equal(resolveChoice({ ...b, input: { command: "ls" } }, groups)?.proposal, b);
  assert.equal(resolveChoice({ ...b, input: { command: "rm -rf /" } }, groups), undefined);
  assert.equal(resolveChoice(undefined, groups), undefined);
});
