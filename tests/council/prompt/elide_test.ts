/**
 * The context budget (issue 24, point 1): every prompt fits its agent's `contextTokens`; the
 * oldest tool results and assistant texts go first, each replaced by a marker; the system
 * prompt, the last ask and the latest tool results stay whole; the child is told; and the cut
 * stays put from turn to turn so the prompt's beginning stays byte-identical.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { budgetTokens } from "../../../src/agents/context_budget.ts";
import { promptText } from "../../../src/agents/prompt_text.ts";
import type { StructuredPrompt } from "../../../src/agents/types.ts";
import { ELISION_TITLE } from "../../../src/council/prompt/compose.ts";
import { ELIDED } from "../../../src/council/prompt/entries.ts";
import {
  actionPrompt,
  answerPrompt,
  selectionPrompt,
  synthesisPrompt,
} from "../../../src/council/prompt/prompts.ts";
import type { ToolSpec, TranscriptEntry } from "../../../src/council/types.ts";

const SYSTEM = "You are a careful coding assistant. ".repeat(40);
const TOOLS: ToolSpec[] = [
  { name: "Read", description: "Reads a file.", inputSchema: { type: "object" } },
  { name: "Bash", description: "Runs a command.", inputSchema: { type: "object" } },
];

/** `n` tool round trips after a first ask, each result `size` characters, then a new ask. */
function session(
  n: number,
  size: number,
  lastAsk = "Now fix the failing test.",
): TranscriptEntry[] {
  const transcript: TranscriptEntry[] = [{ kind: "user", text: "Look into the parser." }];
  for (let i = 0; i < n; i++) {
    transcript.push({ kind: "assistant", text: `Step ${i}: I will read file ${i}. `.repeat(12) });
    transcript.push({ kind: "tool_call", id: `t${i}`, name: "Read", input: { path: `f${i}.ts` } });
    transcript.push({
      kind: "tool_result",
      id: `t${i}`,
      text: `// file ${i}\n${"x".repeat(size)}`,
      isError: false,
    });
  }
  transcript.push({ kind: "user", text: lastAsk });
  transcript.push({ kind: "tool_call", id: "last", name: "Bash", input: { cmd: "deno test" } });
  transcript.push({
    kind: "tool_result",
    id: "last",
    text: `LATEST RESULT ${"y".repeat(3000)}`,
    isError: true,
  });
  return transcript;
}

const fit = (contextTokens: number) => ({ contextTokens, cacheKey: "council-test" });
const tokensOf = (prompt: StructuredPrompt) => budgetTokens(promptText(prompt).length);
const request = (transcript: TranscriptEntry[]) => ({ system: SYSTEM, transcript });

Deno.test("budget: a conversation that fits is sent whole, with no note", () => {
  const prompt = actionPrompt(request(session(5, 1000)), TOOLS, false, fit(100_000));
  const text = promptText(prompt);
  assert.ok(!text.includes(ELIDED));
  assert.ok(!prompt.request.some((s) => s.title === ELISION_TITLE));
  assert.equal(prompt.conversation.length, session(5, 1000).length);
});

Deno.test("budget: the oldest tool results and assistant texts are elided first, each marked", () => {
  const transcript = session(40, 6000);
  const budget = 30_000;
  const prompt = actionPrompt(request(transcript), TOOLS, true, fit(budget));
  assert.ok(tokensOf(prompt) <= budget, `${tokensOf(prompt)} > ${budget}`);
  const entries = prompt.conversation;
  const results = entries.filter((e) => /^result of call t\d+$/.test(e.tag));
  const elided = results.map((e) => e.text.startsWith(ELIDED));
  const kept = elided.indexOf(false);
  assert.ok(kept > 0, "the oldest results are elided");
  assert.deepEqual(elided, results.map((_, i) => i < kept), "all older ones, no newer one");
  // Each marker keeps its entry's tag and says what was cut.
  const marker = entries.find((e) => e.tag === "result of call t0")!;
  assert.equal(marker.text, `${ELIDED}: 6,010 characters of tool output]`);
  const assistant = entries.find((e) => e.role === "assistant" && e.text.startsWith(ELIDED))!;
  assert.match(assistant.text, /characters of assistant text\]$/);
  // User messages are not elided in this step.
  assert.equal(entries[0].text, "Look into the parser.");
});

Deno.test("budget: the system prompt, the last ask and the latest tool results are never cut", () => {
  const transcript = session(60, 8000);
  const prompt = actionPrompt(request(transcript), TOOLS, false, fit(20_000));
  const text = promptText(prompt);
  assert.ok(tokensOf(prompt) <= 20_000);
  assert.ok(text.includes(SYSTEM.trim()));
  assert.ok(text.includes("[user]\nNow fix the failing test."));
  assert.ok(text.includes(`LATEST RESULT ${"y".repeat(3000)}`));
  assert.ok(text.includes('[assistant called tool Bash (call last)]\n{"cmd":"deno test"}'));
});

Deno.test("budget: the child is told what was elided, just before its task", () => {
  const prompt = answerPrompt(request(session(40, 6000)), false, fit(30_000));
  const titles = prompt.request.map((s) => s.title);
  assert.deepEqual(titles, [ELISION_TITLE, "Your task"]);
  const note = prompt.request[0].body;
  assert.match(note, /left out \d+ tool results, \d+ assistant messages \([\d,]+ characters\)/);
  assert.ok(note.includes(ELIDED));
  assert.match(note, /latest tool results are complete/);
});

Deno.test("budget: a transcript the host itself could send fits even a small child", () => {
  // About 200k tokens of transcript (a full Claude Code window) for a 16k-token child.
  const transcript = session(100, 8000);
  assert.ok(promptText(answerPrompt(request(transcript), false, fit(10_000_000))).length > 800_000);
  for (const budget of [16_000, 64_000, 150_000]) {
    const prompt = actionPrompt(request(transcript), TOOLS, true, fit(budget));
    assert.ok(tokensOf(prompt) <= budget, `${tokensOf(prompt)} > ${budget}`);
    assert.ok(promptText(prompt).includes("LATEST RESULT"));
  }
});

Deno.test("budget: as a last resort an oversized latest result is cut in the middle, marked", () => {
  const transcript = session(3, 100);
  transcript[transcript.length - 1] = {
    kind: "tool_result",
    id: "last",
    text: `HEAD ${"z".repeat(200_000)} TAIL`,
    isError: false,
  };
  const prompt = answerPrompt(request(transcript), false, fit(20_000));
  const text = promptText(prompt);
  assert.ok(tokensOf(prompt) <= 20_000);
  assert.ok(text.includes("HEAD ") && text.includes(" TAIL"), "both ends are kept");
  assert.match(text, /\[elided to fit the context: [\d,]+ characters cut here\]/);
  assert.match(prompt.request[0].body, /cut in the middle/);
});

Deno.test("budget: every prompt kind fits its budget, whatever the transcript (property)", () => {
  const entry = fc.oneof(
    fc.record({ kind: fc.constant("user" as const), text: fc.string({ maxLength: 3000 }) }),
    fc.record({ kind: fc.constant("assistant" as const), text: fc.string({ maxLength: 3000 }) }),
    fc.record({ kind: fc.constant("system" as const), text: fc.string({ maxLength: 500 }) }),
    fc.record({
      kind: fc.constant("tool_call" as const),
      id: fc.string({ maxLength: 8 }),
      name: fc.constantFrom("Read", "Bash"),
      input: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 2000 })),
    }),
    fc.record({
      kind: fc.constant("tool_result" as const),
      id: fc.string({ maxLength: 8 }),
      text: fc.string({ maxLength: 20_000 }),
      isError: fc.boolean(),
    }),
  );
  fc.assert(
    fc.property(
      fc.array(entry, { maxLength: 80 }),
      fc.string({ maxLength: 20_000 }),
      fc.integer({ min: 4_000, max: 40_000 }),
      (transcript, system, budget) => {
        const conversation = { system, transcript };
        const prompts = [
          answerPrompt(conversation, true, fit(budget)),
          actionPrompt(conversation, TOOLS, false, fit(budget)),
          synthesisPrompt(
            conversation,
            [{ text: "draft one" }, { text: "x".repeat(5000), diff: "+ a line" }],
            fit(budget),
          ),
          selectionPrompt(conversation, TOOLS, [], 3, fit(budget)),
        ];
        for (const prompt of prompts) {
          assert.ok(tokensOf(prompt) <= budget, `${tokensOf(prompt)} > ${budget}`);
          assert.equal(prompt.request.at(-1)?.title, "Your task");
        }
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("budget: the cut stays put as the session grows, so earlier text stays a prefix", () => {
  const budget = 40_000;
  const full = session(70, 5000);
  let previous: string | undefined;
  let moves = 0;
  let elidedTurns = 0;
  // Each host request adds one round trip: assistant text, call, result.
  for (let end = 30; end <= full.length; end += 3) {
    const prompt = actionPrompt(request(full.slice(0, end)), TOOLS, false, fit(budget));
    assert.ok(tokensOf(prompt) <= budget);
    const text = promptText(prompt);
    const conversation = text.slice(0, text.lastIndexOf("\n\n[") + 2);
    if (text.includes(ELIDED)) elidedTurns++;
    if (previous !== undefined && !conversation.startsWith(previous)) moves++;
    // What a later turn must repeat: everything up to this turn's last entry.
    previous = conversation;
  }
  assert.ok(elidedTurns >= 40, `elision happened on ${elidedTurns} turns`);
  assert.ok(moves <= elidedTurns / 4, `the cut moved on ${moves} of ${elidedTurns} turns`);
});

Deno.test("budget: a reminder injected later does not take the last ask's protection", () => {
  const transcript = session(40, 6000, "Keep the old API working.");
  // Round trips after the ask; one tool-loop message carries an injected reminder.
  for (let i = 0; i < 4; i++) {
    transcript.push({ kind: "tool_call", id: `after${i}`, name: "Read", input: { i } });
    transcript.push({
      kind: "tool_result",
      id: `after${i}`,
      text: "y".repeat(5000),
      isError: false,
    });
    if (i === 1) {
      transcript.push({
        kind: "user",
        text: "<system-reminder>\nThe date changed.\n</system-reminder>",
      });
    }
  }
  const prompt = answerPrompt(request(transcript), false, fit(4_000));
  assert.ok(tokensOf(prompt) <= 4_000);
  assert.ok(promptText(prompt).includes("[user]\nKeep the old API working."));
});
