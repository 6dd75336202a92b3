/**
 * Recognises housekeeping requests (session titles, summaries, compaction, topic checks, short
 * utility asks) by the host's own label when it gives one, else by the request's shape.
 */
import { classifyAsk } from "./ask.ts";
import type { TurnInput, TurnRequest } from "../types.ts";

/** Whether a request is housekeeping, and why (one short clause for the log). */
type TrafficVerdict = NonNullable<TurnRequest["traffic"]>;

/** A JSON reply with at most this many fields is a utility answer (a title, a flag and a name). */
const MAX_UTILITY_FIELDS = 3;

/** Asks to name a session, a conversation or a task. */
const TITLE =
  /\b(?:title|naming|name)\b[^\n]{0,120}\b(?:session|conversation|chat|thread|task)\b|\b(?:generate|write|create|suggest|produce)\b[^\n]{0,80}\btitle\b/i;
/** Asks to summarise the conversation so far. */
const SUMMARY =
  /\bsummar(?:y|ies|ise|ize|ising|izing)\b[^\n]{0,160}\b(?:conversation|session|chat|discussion|transcript)\b|\b(?:conversation|session|chat|discussion|transcript)\b[^\n]{0,160}\bsummar(?:y|ise|ize)\b/i;
/** Asks whether a message starts a new topic. */
const TOPIC = /\bnew\s+(?:conversation\s+)?topic\b|\bisNewTopic\b/i;
/** Demands a reply that is one line, one word or only JSON. */
const ONE_LINE =
  /\b(?:respond|reply|answer|output|return)\b[^\n]{0,60}\b(?:only|just|exactly|single)\b[^\n]{0,40}\b(?:json|line|word|sentence)\b/i;
/**
 * Codex's compaction ask names itself (its marker phrase, not its wording); with no tools
 * declared it is a compaction whatever the turn metadata says.
 */
const CHECKPOINT = /\bcontext\s+checkpoint\s+compaction\b/i;
/** Forbids tools for this reply (a host compacting its context says so). */
const NO_TOOLS =
  /\b(?:do not|don't|never|without)\s+(?:call(?:ing)?|us(?:e|ing))\s+(?:any\s+)?tools?\b|\btext only\b/i;

/** The texts the host wrote for this request: its system prompt, system notes, the last ask. */
function hostTexts(
  input: Pick<TurnInput, "system" | "transcript">,
): { system: string; ask: string } {
  const notes = input.transcript.flatMap((e) => (e.kind === "system" ? [e.text] : []));
  return { system: [input.system, ...notes].join("\n"), ask: classifyAsk(input.transcript) };
}

function shapeVerdict(input: Pick<TurnInput, "system" | "transcript" | "tools" | "hints">) {
  const declared = Math.max(input.tools.length, input.hints?.declaredTools ?? 0);
  const { system, ask } = hostTexts(input);
  const fields = input.hints?.jsonReplyFields;
  const utilityJson = fields !== undefined && fields.length > 0 &&
    fields.length <= MAX_UTILITY_FIELDS;
  const wording = (pattern: RegExp) => pattern.test(system) || pattern.test(ask);
  const purpose = wording(TITLE)
    ? "title"
    : wording(SUMMARY)
    ? "summary"
    : wording(TOPIC)
    ? "topic check"
    : undefined;
  if (utilityJson && (declared === 0 || purpose)) {
    return `asks for a short JSON reply (${fields.join(", ")})${declared ? "" : " with no tools"}`;
  }
  if (declared === 0 && purpose) return `a ${purpose} request with no tools`;
  if (declared === 0 && ONE_LINE.test(ask) && ask.length <= 4000) {
    return "a short utility ask demanding a one-line or JSON reply, with no tools";
  }
  return undefined;
}

/** Why a request is a compaction by its shape, or undefined (the label is checked elsewhere). */
function compactionShape(
  input: Pick<TurnInput, "system" | "transcript" | "tools" | "hints">,
  labelled: boolean,
): string | undefined {
  const ask = classifyAsk(input.transcript);
  const declared = Math.max(input.tools.length, input.hints?.declaredTools ?? 0);
  if (declared === 0 && CHECKPOINT.test(ask)) {
    return "a compaction request (context checkpoint, no tools)";
  }
  // Without a label only: a user may ask for a tool-less summary in a labelled main turn.
  if (!labelled && SUMMARY.test(ask) && NO_TOOLS.test(ask)) {
    return "a compaction request (summary, no tools)";
  }
  return undefined;
}

/**
 * A compaction, labelled or by its shape, is marked as one (it runs one agent, the synthesizer).
 * Otherwise the host's label decides when present (Claude Code's request class, Codex's turn
 * metadata); else the request's shape: a title, summary or topic request, a short JSON reply
 * with no tools, or a utility ask demanding one line.
 */
export function classifyTraffic(
  input: Pick<TurnInput, "system" | "transcript" | "tools" | "hints">,
): TrafficVerdict {
  const labelled = input.hints?.requestClass;
  if (labelled?.compaction) return { housekeeping: true, reason: labelled.label, compaction: true };
  const compaction = compactionShape(input, labelled !== undefined);
  if (compaction) return { housekeeping: true, reason: compaction, compaction: true };
  if (labelled) return { housekeeping: labelled.housekeeping, reason: labelled.label };
  const shape = shapeVerdict(input);
  return shape
    ? { housekeeping: true, reason: shape }
    : { housekeeping: false, reason: "no housekeeping label or shape" };
}

/** The traffic decision as a log field: `housekeeping (why)` or `council turn (why)`. */
export function describeTraffic(traffic: TrafficVerdict | undefined): string {
  if (!traffic) return "council turn";
  return `${traffic.housekeeping ? "housekeeping" : "council turn"} (${traffic.reason})`;
}
