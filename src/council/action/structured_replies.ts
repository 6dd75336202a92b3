/**
 * Structured replies from children: tolerant JSON extraction, proposal / choice / judge parsing,
 * tool-input validation against the host's JSON Schema, and the majority fallback.
 */
import { type Schema, type SchemaDraft, Validator } from "@cfworker/json-schema";
import type { Outcome, ToolSpec } from "../types.ts";

/** One next action proposed by a child: exactly the shape of a turn outcome. */
export type Proposal = Outcome;

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** End index (exclusive) of the balanced `{…}` starting at `start`, or -1. Strings respected. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * Every top-level JSON object found in free text, in order: bare, inside code fences, or
 * surrounded by prose. Text that merely looks like an object is skipped.
 */
export function extractJsonObjects(text: string): JsonObject[] {
  const found: JsonObject[] = [];
  let i = text.indexOf("{");
  while (i >= 0) {
    const end = balancedEnd(text, i);
    let next = i + 1;
    if (end > 0) {
      try {
        const value = JSON.parse(text.slice(i, end));
        if (isObject(value)) {
          found.push(value);
          next = end;
        }
      } catch { /* not JSON: try the next brace */ }
    }
    i = text.indexOf("{", next);
  }
  return found;
}

/**
 * Reads one object as a proposal. Tolerated: `kind` omitted or in another case, the tool name
 * under `tool`, the input under `arguments` / `args` / `parameters`, and input as a JSON string.
 */
function asProposal(value: JsonObject): Proposal | undefined {
  const kind = typeof value.kind === "string" ? value.kind.toLowerCase() : undefined;
  const name = typeof value.name === "string"
    ? value.name
    : typeof value.tool === "string"
    ? value.tool
    : undefined;
  const text = typeof value.text === "string" ? value.text : undefined;
  if (kind === "answer" || (kind === undefined && text !== undefined && name === undefined)) {
    return text !== undefined ? { kind: "answer", text } : undefined;
  }
  if (kind === "tool" || (kind === undefined && name !== undefined && text === undefined)) {
    if (name === undefined) return undefined;
    let input = value.input ?? value.arguments ?? value.args ?? value.parameters ?? {};
    if (typeof input === "string") {
      try {
        input = JSON.parse(input);
      } catch { /* left as a string: rejected below */ }
    }
    return isObject(input) ? { kind: "tool", name, input } : undefined;
  }
  return undefined;
}

/** The child's proposal: the last proposal-shaped object in its reply, or undefined. */
export function parseProposal(text: string): Proposal | undefined {
  const proposals = extractJsonObjects(text).map(asProposal).filter((p) => p !== undefined);
  return proposals.at(-1);
}

/** What a child's reply on an action turn amounts to. */
type ReplyReading =
  | { kind: "valid"; proposal: Proposal }
  /** `prose`: the reply held no JSON at all, so it may serve as a last-resort answer. */
  | { kind: "dropped"; reason: string; prose: boolean };

/** Parses and checks one child's reply. */
export function readReply(text: string, checker: ToolChecker): ReplyReading {
  const proposal = parseProposal(text);
  if (!proposal) {
    return {
      kind: "dropped",
      reason: "replied without an action object",
      prose: extractJsonObjects(text).length === 0,
    };
  }
  const problem = checker.problem(proposal);
  return problem
    ? { kind: "dropped", reason: `proposal dropped: ${problem}`, prose: false }
    : { kind: "valid", proposal };
}

/** The synthesizer's reply on an action turn. */
type Choice = { kind: "choose"; number: number } | Proposal;

/** `{"choose": N}` (N may be a numeric string) or a proposal object; the last one wins. */
export function parseChoice(text: string): Choice | undefined {
  let choice: Choice | undefined;
  for (const value of extractJsonObjects(text)) {
    const raw = value.choose;
    const n = typeof raw === "string" ? Number(raw.trim()) : raw;
    if (typeof n === "number" && Number.isInteger(n)) choice = { kind: "choose", number: n };
    else choice = asProposal(value) ?? choice;
  }
  return choice;
}

export interface JudgeVerdict {
  fanOut: boolean;
  reason: string;
}

/** `{"fanOut": bool, "reason": "…"}`; anything else is undefined (the caller runs single). */
export function parseJudgeVerdict(text: string): JudgeVerdict | undefined {
  let verdict: JudgeVerdict | undefined;
  for (const value of extractJsonObjects(text)) {
    const fanOut = value.fanOut ?? value.fan_out;
    if (typeof fanOut !== "boolean") continue;
    const reason = typeof value.reason === "string" ? value.reason.trim() : "";
    verdict = { fanOut, reason: reason || "(no reason given)" };
  }
  return verdict;
}

/** Keywords whose errors only say "something inside failed"; the inner error says what. */
const CONTAINER_KEYWORDS = new Set(["properties", "items", "allOf", "anyOf", "oneOf", "$ref"]);

function draftOf(schema: JsonObject): SchemaDraft {
  const id = typeof schema.$schema === "string" ? schema.$schema : "";
  if (id.includes("draft-04")) return "4";
  if (id.includes("draft-06") || id.includes("draft-07")) return "7";
  if (id.includes("2020-12")) return "2020-12";
  return "2019-09";
}

/** Checks proposals against the declared tools; validators are compiled once per tool. */
export class ToolChecker {
  #tools: Map<string, ToolSpec>;
  #validators = new Map<string, Validator | null>();

  constructor(tools: readonly ToolSpec[]) {
    this.#tools = new Map(tools.map((t) => [t.name, t]));
  }

  /** A reason the proposal cannot go to the host, or undefined when it is valid. */
  problem(proposal: Proposal): string | undefined {
    if (proposal.kind === "answer") {
      return proposal.text.trim() ? undefined : "empty answer";
    }
    const tool = this.#tools.get(proposal.name);
    if (!tool) return `unknown tool ${JSON.stringify(proposal.name)}`;
    const validator = this.#validator(tool);
    if (!validator) return undefined;
    let result: ReturnType<Validator["validate"]>;
    try {
      result = validator.validate(proposal.input);
    } catch {
      // Unresolvable $ref and the like: the schema is the host's problem, not the child's.
      this.#validators.set(tool.name, null);
      return undefined;
    }
    if (result.valid) return undefined;
    const specific = result.errors.find((e) => !CONTAINER_KEYWORDS.has(e.keyword));
    const detail = (specific ?? result.errors[0])?.error ?? "invalid";
    return `input does not match ${tool.name}'s schema: ${detail}`;
  }

  #validator(tool: ToolSpec): Validator | null {
    if (!this.#validators.has(tool.name)) {
      let validator: Validator | null = null;
      try {
        validator = new Validator(tool.inputSchema as Schema, draftOf(tool.inputSchema), true);
      } catch {
        // A schema this library cannot compile must not block the host's own tool.
        validator = null;
      }
      this.#validators.set(tool.name, validator);
    }
    return this.#validators.get(tool.name)!;
  }
}

/** JSON with object keys sorted, so equal proposals compare equal as strings. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** A valid proposal and the child that made it. */
export interface Ballot {
  child: number;
  proposal: Proposal;
}

/** One distinct proposal: its first proposer's ballot (kept verbatim) and its vote count. */
interface ProposalGroup {
  first: Ballot;
  votes: number;
}

/** Distinct proposals in order of first appearance, with how many children made each. */
export function tally(ballots: readonly Ballot[]): ProposalGroup[] {
  const groups = new Map<string, ProposalGroup>();
  for (const ballot of [...ballots].sort((a, b) => a.child - b.child)) {
    const key = canonicalJson(ballot.proposal);
    const group = groups.get(key);
    if (group) group.votes++;
    else groups.set(key, { first: ballot, votes: 1 });
  }
  return [...groups.values()];
}

/** The most-proposed action; ties go to the lowest child index. */
export function mostProposed(ballots: readonly Ballot[]): Ballot | undefined {
  let best: ProposalGroup | undefined;
  for (const group of tally(ballots)) {
    if (!best || group.votes > best.votes) best = group;
  }
  return best?.first;
}

/** A short one-line rendering of a proposal for progress lines. */
export function describeProposal(proposal: Proposal, max = 120): string {
  const text = proposal.kind === "tool"
    ? `${proposal.name} ${JSON.stringify(proposal.input)}`
    : `answer: ${JSON.stringify(proposal.text)}`;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Maps the synthesizer's reply onto a proposal; undefined when it is unusable. */
export function resolveChoice(
  choice: Choice | undefined,
  groups: readonly ProposalGroup[],
): { proposal: Proposal; describe: string } | undefined {
  if (!choice) return undefined;
  if (choice.kind === "choose") {
    const group = groups[choice.number - 1];
    return group
      ? {
        proposal: group.first.proposal,
        describe: `proposal ${choice.number}: ${describeProposal(group.first.proposal)}`,
      }
      : undefined;
  }
  if (choice.kind === "answer") {
    return choice.text.trim() ? { proposal: choice, describe: "to answer instead" } : undefined;
  }
  // A tool object is accepted only as an exact copy of a proposal, never as a new mix.
  const same = groups.find((g) => canonicalJson(g.first.proposal) === canonicalJson(choice));
  return same
    ? { proposal: same.first.proposal, describe: `a copy of ${describeProposal(choice)}` }
    : undefined;
}
