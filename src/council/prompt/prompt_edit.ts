/**
 * Edits of a prompt after it is composed, for one child: every text rewritten (paths pointed
 * into the child's own copy of the workspace), and a section of its own put just before the
 * task. A text prompt is edited as the text it is.
 */
import { sectionText } from "../../agents/prompt_text.ts";
import type { AgentPrompt, PromptSection } from "../../agents/types.ts";

/** The prompt with `rewrite` applied to each of its texts. */
export function mapPromptText(prompt: AgentPrompt, rewrite: (text: string) => string): AgentPrompt {
  if (typeof prompt === "string") return rewrite(prompt);
  const section = (s: PromptSection) => ({ title: s.title, body: rewrite(s.body) });
  return {
    ...prompt,
    preamble: prompt.preamble.map(section),
    conversation: prompt.conversation.map((e) => ({ ...e, text: rewrite(e.text) })),
    request: prompt.request.map(section),
  };
}

/** The prompt with `section` just before its task (the last section); after a text prompt. */
export function withSectionBeforeTask(prompt: AgentPrompt, section: PromptSection): AgentPrompt {
  if (typeof prompt === "string") return `${prompt}\n${sectionText(section.title, section.body)}`;
  return {
    ...prompt,
    request: [...prompt.request.slice(0, -1), section, ...prompt.request.slice(-1)],
  };
}
