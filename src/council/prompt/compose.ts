/**
 * Assembles a child's structured prompt within its budget: the standing instructions first, the
 * conversation (fitted, elide.ts) next, this call's own sections last with the task at the end,
 * and a note when anything was left out.
 */
import { createHash } from "node:crypto";
import type { PromptSection, StructuredPrompt } from "../../agents/types.ts";
import type { AgentConfig } from "../../config/mod.ts";
import { CHARS_PER_BUDGET_TOKEN, contextTokensOf } from "../../agents/context_budget.ts";
import { promptText, sectionText } from "../../agents/prompt_text.ts";
import { count, ELIDED, shortenMiddle } from "./entries.ts";
import { type Elision, fitConversation } from "./elide.ts";
import type { TurnRequest } from "../types.ts";
import { withAttachmentMarkers } from "./turn_attachments.ts";

export type Conversation = Pick<TurnRequest, "system" | "transcript">;

/** What shapes one agent's prompt besides its content. */
export interface PromptFit {
  /** The agent's prompt budget in tokens (`contextTokens`). */
  contextTokens: number;
  /** The session's cache key (see `cacheKeyOf`). */
  cacheKey?: string;
}

const INSTRUCTIONS_TITLE = "Instructions the assistant is operating under";
const CONVERSATION_TITLE = "Conversation so far (oldest first)";
export const ELISION_TITLE = "Left out to fit your context";

/**
 * Room kept for a call's own sections, as a share of the budget: children and the synthesizer
 * of a turn then cut the conversation at the same place and share its cached prefix.
 */
const REQUEST_ALLOWANCE_SHARE = 0.1;
/** Elision advances in steps of this share of the budget (see elide.ts). */
const QUANTUM_SHARE = 0.25;
/** Room kept for the elision note. */
const NOTE_ROOM_CHARS = 900;

/** A stable, non-secret key naming the session for providers' prompt caches. */
export function cacheKeyOf(sessionKey: string): string {
  return `council-${createHash("sha256").update(`cache:${sessionKey}`).digest("hex").slice(0, 32)}`;
}

/** The fit of an agent's prompt on this turn (`model`: the model it runs, if not its own). */
export function fitFor(request: TurnRequest, agent: AgentConfig, model?: string): PromptFit {
  return { contextTokens: contextTokensOf(agent, model), cacheKey: cacheKeyOf(request.sessionKey) };
}

function elisionNote(elision: Elision): string {
  const parts = [
    elision.toolResults && `${count(elision.toolResults)} tool results`,
    elision.toolInputs && `${count(elision.toolInputs)} tool inputs`,
    elision.assistantTexts && `${count(elision.assistantTexts)} assistant messages`,
    elision.collapsed && `${count(elision.collapsed)} whole entries`,
    elision.shortened && `the middle of ${count(elision.shortened)} long texts`,
  ].filter(Boolean);
  return [
    `The conversation is longer than this agent's context allows, so the gateway left out ` +
    `${parts.join(", ")} (${count(elision.chars)} characters), oldest first.`,
    `Each place is marked "${ELIDED}: …]" with what was there.`,
    elision.shortened
      ? "Even the parts that are normally kept whole (the system prompt, the user's last " +
        "request, the latest tool results) were too long and were cut in the middle, marked."
      : "The system prompt, the user's last request and the latest tool results are complete.",
    "If you need something that was left out, look it up again (read the file, rerun the " +
    "command) rather than guess.",
  ].join("\n");
}

/** Characters of the prompt besides the system prompt's text and the entries. */
function fixedChars(skeleton: StructuredPrompt, system: string, budgetChars: number): number {
  const request = skeleton.request.reduce((n, s) => n + sectionText(s.title, s.body).length, 0);
  const allowance = Math.max(request, Math.floor(budgetChars * REQUEST_ALLOWANCE_SHARE));
  const instructions = system.trim() ? sectionText(INSTRUCTIONS_TITLE, "").length + 1 : 0;
  const base = promptText({ ...skeleton, request: [] }).length;
  // Each request section is joined by one more line break.
  return base + instructions + allowance + skeleton.request.length + 1 + NOTE_ROOM_CHARS;
}

/** Last guard: the longest section other than the task cut in the middle until it fits. */
function enforceBudget(prompt: StructuredPrompt, contextTokens: number): StructuredPrompt {
  let current = prompt;
  for (let i = 0; i < 50; i++) {
    const over = promptText(current).length - contextTokens * CHARS_PER_BUDGET_TOKEN;
    if (over <= 0) return current;
    const sections = [...current.preamble, ...current.request.slice(0, -1)];
    const longest = sections.reduce((a, b) => (b.body.length > a.body.length ? b : a), {
      title: "",
      body: "",
    });
    if (longest.body.length <= 400) return current;
    const cut = { ...longest, body: shortenMiddle(longest.body, longest.body.length - over - 1) };
    const swap = (s: PromptSection) => (s === longest ? cut : s);
    current = {
      ...current,
      preamble: current.preamble.map(swap),
      request: current.request.map(swap),
    };
  }
  return current;
}

/**
 * The prompt: `preamble` (stable for the session) after the host's instructions, the fitted
 * conversation, then `request` (the task last), within `fit.contextTokens`.
 */
export function composePrompt(
  conversation: Conversation,
  preamble: readonly PromptSection[],
  request: readonly PromptSection[],
  fit: PromptFit,
): StructuredPrompt {
  const budgetChars = fit.contextTokens * CHARS_PER_BUDGET_TOKEN;
  const skeleton: StructuredPrompt = {
    preamble: [...preamble],
    conversationTitle: CONVERSATION_TITLE,
    conversation: [],
    request: [...request],
    ...(fit.cacheKey ? { cacheKey: fit.cacheKey } : {}),
  };
  const transcript = withAttachmentMarkers(conversation.transcript);
  const fitted = fitConversation(conversation.system, transcript, {
    budgetChars,
    fixedChars: fixedChars(skeleton, conversation.system, budgetChars),
    quantumChars: Math.max(1, Math.floor(budgetChars * QUANTUM_SHARE)),
  });
  const note = fitted.elision ? [{ title: ELISION_TITLE, body: elisionNote(fitted.elision) }] : [];
  const prompt: StructuredPrompt = {
    ...skeleton,
    preamble: [
      ...(fitted.system.trim() ? [{ title: INSTRUCTIONS_TITLE, body: fitted.system }] : []),
      ...preamble,
    ],
    conversation: fitted.entries,
    request: [...request.slice(0, -1), ...note, ...request.slice(-1)],
  };
  return enforceBudget(prompt, fit.contextTokens);
}
