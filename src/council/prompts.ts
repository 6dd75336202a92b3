/**
 * The texts the council sends to agents: child answer and action prompts, the synthesizer's
 * prompts, and the fan-out judge's prompt. All are plain text written to the child's stdin.
 */
import type { FanOutBar } from "./plan.ts";
import type { Proposal } from "./actions.ts";
import type { ToolSpec, TranscriptEntry, TurnRequest } from "./types.ts";
import { withAttachmentMarkers } from "./attachments.ts";

type Conversation = Pick<TurnRequest, "system" | "transcript">;

/** Appended to children's prompts on substantive turns; never to background traffic. */
export const EXHAUSTIVENESS_DIRECTIVE = [
  "Be thorough. Address every part of the request, consider edge cases and failure modes,",
  "and check facts against the files in your working directory instead of assuming them.",
  "Prefer a complete, correct result over a short one.",
].join(" ");

/** Tool descriptions can be pages long; the schema carries what a proposal must satisfy. */
const MAX_TOOL_DESCRIPTION = 2000;
const MAX_JUDGE_ASK = 6000;

function section(title: string, body: string): string {
  return `=== ${title} ===\n${body.trim()}\n`;
}

function renderEntry(entry: TranscriptEntry): string {
  switch (entry.kind) {
    case "user":
      return `[user]\n${entry.text}`;
    case "assistant":
      return `[assistant]\n${entry.text}`;
    case "system":
      return `[system note]\n${entry.text}`;
    case "tool_call":
      return `[assistant called tool ${entry.name} (call ${entry.id})]\n${
        JSON.stringify(entry.input)
      }`;
    case "tool_result":
      return `[result of call ${entry.id}${entry.isError ? ", an error" : ""}]\n${entry.text}`;
  }
}

/** The host's system prompt and the conversation so far. */
export function renderConversation(conversation: Conversation): string {
  const parts: string[] = [];
  if (conversation.system.trim()) {
    parts.push(section("Instructions the assistant is operating under", conversation.system));
  }
  const entries = withAttachmentMarkers(conversation.transcript).map(renderEntry).join("\n\n");
  parts.push(section("Conversation so far (oldest first)", entries || "(empty)"));
  return parts.join("\n");
}

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

/** A child's prompt on an answer turn. */
export function answerPrompt(conversation: Conversation, directive: boolean): string {
  return [
    renderConversation(conversation),
    section(
      "Your task",
      "You are the assistant in the conversation above. Write the assistant's next reply to " +
        "the last message. Reply with the answer text itself, as it should be shown to the user." +
        (directive ? `\n\n${EXHAUSTIVENESS_DIRECTIVE}` : ""),
    ),
  ].join("\n");
}

/** A child's prompt on an action turn: propose exactly one next action as JSON. */
export function actionPrompt(
  conversation: Conversation,
  tools: readonly ToolSpec[],
  directive: boolean,
): string {
  return [
    renderConversation(conversation),
    section("Tools the assistant may call", renderTools(tools)),
    section(
      "Your task",
      [
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
    ),
  ].join("\n");
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

/** The synthesizer's prompt on an answer turn; candidates arrive already shuffled. */
export function synthesisPrompt(
  conversation: Conversation,
  candidates: readonly SynthesisCandidate[],
): string {
  const withChanges = candidates.some((c) => c.diff);
  const drafts = candidates.map(({ text, diff }, i) => {
    const label = candidateLabel(i);
    const reply = section(`Candidate ${label}`, text || "(empty)");
    if (!withChanges) return reply;
    return `${reply}${section(`Candidate ${label}'s file changes`, diff || "(no files changed)")}`;
  });
  const task = [
    "Write the single best reply for the user. Keep what is correct and useful from any",
    "candidate, fix what is wrong, and where candidates disagree, settle it yourself (check",
    "the files in your working directory if needed). Reply with the final answer text only;",
    "do not mention candidates, drafts or this review.",
  ];
  return [
    renderConversation(conversation),
    section(
      "Candidate replies",
      `Independent assistants each drafted a reply to the last message. They are listed in no ` +
        `particular order.\n\n${drafts.join("\n")}`,
    ),
    section("Your task", (withChanges ? [...CHANGES_TASK, "", ...task] : task).join("\n")),
  ].join("\n");
}

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

/** Told to a child that works in an isolated copy of the workspace. */
export function isolatedWorkspaceNote(cwd: string): string {
  return section(
    "Your working directory",
    `${cwd} is your own copy of the user's workspace. Make file changes only inside it; ` +
      "they are reviewed, and one assistant's changes may then be applied to the user's " +
      "workspace.",
  );
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
): string {
  const listed = proposals.map(({ proposal, votes }, i) =>
    `Proposal ${i + 1} (made by ${votes} of ${children}): ${JSON.stringify(proposal)}`
  ).join("\n");
  return [
    renderConversation(conversation),
    section("Tools the assistant may call", tools.map((t) => `- ${t.name}`).join("\n")),
    section("Proposed next steps", listed),
    section(
      "Your task",
      [
        "Independent assistants each proposed the assistant's next step. Pick the best one.",
        "Reply with exactly one JSON object and nothing else:",
        '  {"choose": N}   to take proposal N exactly as written, or',
        '  {"kind":"answer","text":"…"}   to reply to the user instead of calling a tool.',
        "Do not combine or edit proposals.",
      ].join("\n"),
    ),
  ].join("\n");
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
    section("Request", trimmed || "(empty)"),
    section(
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
