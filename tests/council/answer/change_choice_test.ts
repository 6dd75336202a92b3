import assert from "node:assert/strict";
import {
  type ChangeChoice,
  ChoiceLineReader,
  parseChoiceLine,
} from "../../../src/council/answer/change_choice.ts";
import { replacePath } from "../../../src/council/calls/child_workspaces.ts";

Deno.test("change choice: the line names a candidate letter or none, tolerantly", () => {
  assert.deepEqual(parseChoiceLine("CHANGES: B", 3), { kind: "candidate", index: 1 });
  assert.deepEqual(parseChoiceLine("  **Changes: candidate c**  ", 3), {
    kind: "candidate",
    index: 2,
  });
  assert.deepEqual(parseChoiceLine("CHANGES: none", 3), { kind: "none" });
  assert.equal(parseChoiceLine("CHANGES: D", 3), undefined, "no such candidate");
  assert.equal(parseChoiceLine("The changes: look at A first", 3), undefined);
  assert.equal(parseChoiceLine("Here is the answer.", 3), undefined);
});

function read(chunks: string[], count = 3): { out: string; choices: ChangeChoice[] } {
  const choices: ChangeChoice[] = [];
  const reader = new ChoiceLineReader(count, (c) => choices.push(c));
  const out = chunks.map((c) => reader.feed(c)).join("") + reader.flush();
  return { out, choices };
}

Deno.test("change choice: a streamed choice line is held back and reported before any text", () => {
  const order: string[] = [];
  const reader = new ChoiceLineReader(2, (c) => order.push(`choice ${c.kind}`));
  for (const chunk of ["\nCHA", "NGES: ", "A\n", "\nThe ", "answer."]) {
    const passed = reader.feed(chunk);
    if (passed) order.push(passed);
  }
  assert.deepEqual(order, ["choice candidate", "The ", "answer."]);
  assert.deepEqual(reader.choice, { kind: "candidate", index: 0 });
  assert.deepEqual(read(["CHANGES: none"]), { out: "", choices: [{ kind: "none" }] });
});

Deno.test("change choice: text without a choice line passes through whole; nothing is reported", () => {
  assert.deepEqual(read(["Short answer", " with no newline"]), {
    out: "Short answer with no newline",
    choices: [],
  });
  const long = "x".repeat(81);
  const reader = new ChoiceLineReader(3, () => {});
  assert.equal(reader.feed(long), long, "a long first line is not held back");
  assert.equal(reader.feed("\nmore"), "\nmore");
  assert.deepEqual(reader.choice, { kind: "unstated" });
  assert.deepEqual(read(["First line\nsecond"]).out, "First line\nsecond");
});

Deno.test("change choice: each run of text (after a tool use) may open with it; the last wins", () => {
  const choices: ChangeChoice[] = [];
  const reader = new ChoiceLineReader(3, (c) => choices.push(c));
  // Narration, a tool use (flush), then the reply proper with its choice line.
  assert.equal(reader.feed("Let me read the diff first."), "");
  assert.equal(reader.flush(), "Let me read the diff first.");
  assert.equal(reader.feed("CHANGES: C\nC is right."), "C is right.");
  assert.equal(reader.flush(), "");
  assert.deepEqual(choices, [{ kind: "candidate", index: 2 }]);
  assert.equal(reader.feed("CHANGES: none\n"), "");
  assert.deepEqual(reader.choice, { kind: "none" });
});

Deno.test("change choice: strip removes the choice line from a CLI's final text", () => {
  const reader = new ChoiceLineReader(3, () => {});
  assert.equal(reader.strip("CHANGES: B\n\nThe answer.\n"), "The answer.\n");
  assert.equal(reader.strip("The answer.\nCHANGES: B"), "The answer.\nCHANGES: B");
  assert.equal(reader.strip("CHANGES: none"), "");
});

Deno.test("child workspaces: a directory's mentions move to the copy, its siblings do not", () => {
  const text = "cwd: /w/repo\nsee /w/repo/src/a.ts and /w/repo2/b.ts or /w/repo.old, (/w/repo)";
  assert.equal(
    replacePath(text, "/w/repo", "/state/t/child-1"),
    "cwd: /state/t/child-1\nsee /state/t/child-1/src/a.ts and /w/repo2/b.ts or /w/repo.old, " +
      "(/state/t/child-1)",
  );
  assert.equal(replacePath("a+b (x)", "a+b (x)", "y"), "y", "special characters are literal");
});
