/**
 * The prompts the council sends to agents: child answer and action prompts and the
 * synthesizer's prompts (structured, each fitted to its agent's budget by compose.ts), and the
 * fan-out judge's prompt (plain text).
 */
import type { FanOutBar } from "../plan/plan.ts";
import type { Proposal } from "../action/structured_replies.ts";
import type { PromptSection, StructuredPrompt } from "../../agents/types.ts";
import { sectionText } from "../../agents/prompt_text.ts";
import { composePrompt, type Conversation, type PromptFit } from "./compose.ts";
import type { ToolSpec } from "../types.ts";

export type { PromptFit } from "./compose.ts";

/** Appended to children's prompts on substantive turns; never to background traffic. */
export const EXHAUSTIVENESS_DIRECTIVE = [
  "Be thorough. Address every part of the request, consider edge cases and failure modes,",
  "and check facts against the files in your working directory instead of assuming them.",
  "Prefer a complete, correct result over a short one.",
].join(" ");

/** Tool descriptions can be pages long; the schema carries what a proposal must satisfy. */
const MAX_TOOL_DESCRIPTION = 2000;
const MAX_JUDGE_ASK = 6000;

function renderTools(tools: readonly ToolSpec[]): string {
  return tools.map((tool) => {
    const description = tool.description.length > MAX_TOOL_DESCRIPTION
      ? `${tool.description.slice(0, MAX_TOOL_DESCRIPTION)}…`
      : tool.description;
    return `- ${tool.name}: ${description.trim()}\n  input schema: ${
      JSON.stringify(tool.inputSchema)
    }`;
  }).join("\n");
}

/**
 * The tools as a preamble section. The children and the synthesizer of an action turn get the
 * same one, so they share the prompt's cacheable beginning.
 */
function toolsSection(tools: readonly ToolSpec[]): PromptSection[] {
  return tools.length ? [{ title: "Tools the assistant may call", body: renderTools(tools) }] : [];
}

/** A child's prompt on an answer turn. */
export function answerPrompt(
  conversation: Conversation,
  directive: boolean,
  fit: PromptFit,
): StructuredPrompt {
  return composePrompt(conversation, [], [{
    title: "Your task",
    body: "You are the assistant in the conversation above. Write the assistant's next reply to " +
      "the last message. Reply with the answer text itself, as it should be shown to the user." +
      (directive ? `\n\n${EXHAUSTIVENESS_DIRECTIVE}` : ""),
  }], fit);
}

/** A child's prompt on an action turn: propose exactly one next action as JSON. */
export function actionPrompt(
  conversation: Conversation,
  tools: readonly ToolSpec[],
  directive: boolean,
  fit: PromptFit,
): StructuredPrompt {
  return composePrompt(conversation, toolsSection(tools), [{
    title: "Your task",
    body: [
      "You are deciding the assistant's single next step in the conversation above.",
      "The host application runs the tools listed above itself and will send the result back;",
      "do not try to carry out that step yourself (you may look at files to decide).",
      "",
      "Reply with exactly one JSON object and nothing else, in one of these two shapes:",
      '  {"kind":"tool","name":"<one of the tool names above>","input":{<arguments matching that tool\'s input schema>}}',
      '  {"kind":"answer","text":"<the reply to the user>"}',
      "Choose the answer shape only when the work is finished or the user must be asked something.",
      ...(directive ? ["", EXHAUSTIVENESS_DIRECTIVE] : []),
    ].join("\n"),
  }], fit);
}

/** Candidate letters: A…Z, then AA, AB… (councils are small; this just never breaks). */
export function candidateLabel(i: number): string {
  return i < 26
    ? String.fromCharCode(65 + i)
    : `${candidateLabel(Math.floor(i / 26) - 1)}${String.fromCharCode(65 + (i % 26))}`;
}

/** A candidate as the synthesizer sees it: its reply, and its diff when it changed files. */
export interface SynthesisCandidate {
  text: string;
  /** Its changes to its own copy of the workspace; undefined when that turn had no copies. */
  diff?: string;
}

/**
 * The synthesizer's prompt on an answer turn; candidates arrive already shuffled. With `pick`
 * it may send one candidate as written (pick_decider.ts) instead of writing the answer.
 */
export function synthesisPrompt(
  conversation: Conversation,
  candidates: readonly SynthesisCandidate[],
  fit: PromptFit,
  pick = false,
): StructuredPrompt {
  const withChanges = candidates.some((c) => c.diff);
  const drafts = candidates.map(({ text, diff }, i) => {
    const label = candidateLabel(i);
    const reply = sectionText(`Candidate ${label}`, text || "(empty)");
    if (!withChanges) return reply;
    return `${reply}${
      sectionText(`Candidate ${label}'s file changes`, diff || "(no files changed)")
    }`;
  });
  const task = [
    "Write the single best reply for the user. Keep what is correct and useful from any",
    "candidate, fix what is wrong, and where candidates disagree, settle it yourself (check",
    "the files in your working directory if needed). Reply with the final answer text only;",
    "do not mention candidates, drafts or this review.",
  ];
  return composePrompt(conversation, [], [
    {
      title: "Candidate replies",
      body: `Independent assistants each drafted a reply to the last message. They are listed ` +
        `in no particular order.\n\n${drafts.join("\n")}`,
    },
    {
      title: "Your task",
      body: [
        ...(pick ? [...(withChanges ? PICK_WITH_CHANGES : PICK), ""] : []),
        ...(withChanges ? [...CHANGES_TASK, ""] : []),
        ...task,
      ].join("\n"),
    },
  ], fit);
}

/** Sending one candidate as written: the fast way out when nothing needs combining or fixing. */
const PICK = [
  "If one candidate is the best reply as it stands (nothing to add from the others, nothing",
  'to fix), reply with only `{"choose": "<its letter>"}`, for example `{"choose": "B"}`, and',
  "nothing else: that candidate is sent to the user exactly as written. Otherwise, when the",
  "candidates complement each other or all of them are flawed, write the reply yourself:",
];

const PICK_WITH_CHANGES = [
  "If one candidate's reply and its file changes are the best as they stand (nothing to add",
  'from the others, nothing to fix), reply with only `{"choose": "<its letter>"}`, for example',
  '`{"choose": "B"}`, and nothing else: its reply is sent to the user exactly as written and',
  "its changes are applied. Otherwise, write the reply yourself as follows.",
];

/** How the synthesizer chooses among candidates' file changes (see change_choice.ts). */
const CHANGES_TASK = [
  "Each candidate worked in its own copy of the user's workspace; the diffs above are what",
  "they changed there. Changes cannot be combined: choose the one candidate whose changes",
  "are applied to the user's workspace exactly as shown, or none. Your working directory is",
  "the user's workspace as it was; read it if needed, but do not edit it.",
  "The first line of your reply must be `CHANGES: <letter>` (for example `CHANGES: B`) or",
  "`CHANGES: none`; it is removed before the user sees the reply. Then write the reply,",
  "describing the chosen changes as made, and no changes that were not chosen.",
];

/** Told to a child that works in an isolated copy of the workspace (a section before its task). */
export function isolatedWorkspaceNote(cwd: string): PromptSection {
  return {
    title: "Your working directory",
    body: `${cwd} is your own copy of the user's workspace. Make file changes only inside it; ` +
      "they are reviewed, and one assistant's changes may then be applied to the user's " +
      "workspace.",
  };
}

/** A distinct proposal as shown to the synthesizer, with how many children made it. */
export interface NumberedProposal {
  proposal: Proposal;
  votes: number;
}

/** The synthesizer's prompt on an action turn: pick a numbered proposal or answer. */
export function selectionPrompt(
  conversation: Conversation,
  tools: readonly ToolSpec[],
  proposals: readonly NumberedProposal[],
  children: number,
  fit: PromptFit,
): StructuredPrompt {
  const listed = proposals.map(({ proposal, votes }, i) =>
    `Proposal ${i + 1} (made by ${votes} of ${children}): ${JSON.stringify(proposal)}`
  ).join("\n");
  return composePrompt(conversation, toolsSection(tools), [
    { title: "Proposed next steps", body: listed },
    {
      title: "Your task",
      body: [
        "Independent assistants each proposed the assistant's next step. Pick the best one.",
        "Reply with exactly one JSON object and nothing else:",
        '  {"choose": N}   to take proposal N exactly as written, or',
        '  {"kind":"answer","text":"…"}   to reply to the user instead of calling a tool.',
        "Do not combine or edit proposals.",
      ].join("\n"),
    },
  ], fit);
}

/** The fan-out judge's prompt: one JSON verdict about the user's ask. */
export function judgePrompt(
  ask: string,
  bar: FanOutBar,
  context: { tools: boolean; continuation: boolean },
): string {
  const trimmed = ask.length > MAX_JUDGE_ASK ? `${ask.slice(0, MAX_JUDGE_ASK)}…` : ask;
  const rule = bar === "necessary"
    ? "Use a high bar: say true only when the request is hard, ambiguous or high-stakes, so " +
      "that a single attempt is likely to miss something important. Otherwise say false."
    : "Say true when several independent attempts would likely give a better result than " +
      "one (non-trivial code changes, debugging, design or analysis, questions where " +
      "approaches differ). Say false for simple lookups, small talk, trivial or mechanical steps.";
  return [
    sectionText("Request", trimmed || "(empty)"),
    sectionText(
      "Your task",
      [
        "A coding assistant received the request above" +
        (context.tools ? " (it can call tools in the user's workspace)" : "") + "." +
        (context.continuation ? " It has already called a tool and now has the result." : ""),
        "Decide whether it should be handled by several independent agents in parallel, whose",
        `results are then combined, or by one agent. ${rule}`,
        "Do not work on the request itself. Reply with exactly one JSON object and nothing else:",
        '  {"fanOut": true or false, "reason": "<one short sentence>"}',
      ].join("\n"),
    ),
  ].join("\n");
}
