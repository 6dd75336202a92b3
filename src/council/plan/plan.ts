/**
 * Pure planning of a turn: background pinning, continuation scope, fan-out policy and heuristic,
 * round-robin child assignment, and the judge's agent entry.
 */
import {
  type AgentConfig,
  type CliRunner,
  type Config,
  DEFAULT_TIMEOUT_MS,
  type HttpRunner,
  isCliRunner,
  type Runner,
} from "../../config/mod.ts";
import { CLI_ADAPTERS, familyRunnerOf } from "../../agents/cli/runners.ts";
import type { TurnRequest } from "../types.ts";

/** One child of the turn: which agent runs it and how. */
export interface ChildPlan {
  /** Position among the turn's children (0 = agent 0). */
  index: number;
  agentIndex: number;
  agent: AgentConfig;
  /** Display name in progress lines; `claude#2` when an agent runs twice. */
  label: string;
  /** Model override (background pinning); undefined = the agent's configured model. */
  model?: string;
  /** Whether the prompt carries the exhaustiveness directive. */
  directive: boolean;
}

export type FanOutBar = "auto" | "necessary";

/** What the planner decided before any agent runs. */
export type TurnPlan =
  | { kind: "single"; reason: string; child: ChildPlan }
  | { kind: "fanout"; reason: string; children: ChildPlan[] }
  /** The fan-out judge decides; `resolveVerdict` turns its verdict into single / fanout. */
  | { kind: "judge"; bar: FanOutBar; reason: string };

export type PlanSettings = Pick<
  Config,
  "defaultAgents" | "councilSize" | "fanOutPolicy" | "fanOutScope"
>;

/** CONTRACT.md §1.1.5: housekeeping traffic is recognised by the requested model's name. */
export function isBackgroundModel(model: string): boolean {
  return /haiku|small|fast/i.test(model);
}

/**
 * A host-requested model name safe to put in a child's argv: a `command` runner substitutes it
 * into `{model}`, which a user may run through `sh -c`, so no spaces, quotes or shell syntax.
 */
const PINNABLE_MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]{0,255}$/;

export function isPinnableModel(model: string): boolean {
  return PINNABLE_MODEL.test(model);
}

/** A model family, named by the CLI runner that serves it (the runner table's `family`). */
type ModelFamily = CliRunner;

/** The family of a model id, if a CLI of the runner table serves it. */
export function modelFamily(model: string): ModelFamily | undefined {
  return familyRunnerOf(model);
}

/** Runners that serve a family, in order of preference (the CLI, then its model API if any). */
function familyRunners(family: ModelFamily): Runner[] {
  const api = CLI_ADAPTERS[family].family?.api;
  return api ? [family, api] : [family];
}

/** The first agent whose runner serves the model's family (CLI first, then API); else agent 0. */
export function agentIndexForModel(agents: readonly AgentConfig[], model: string): number {
  const family = modelFamily(model);
  for (const runner of family ? familyRunners(family) : []) {
    const index = agents.findIndex((a) => a.runner === runner);
    if (index >= 0) return index;
  }
  return 0;
}

const SMALL_TALK = new Set([
  "hi",
  "hello",
  "hey",
  "hey there",
  "hi there",
  "hello there",
  "yo",
  "good morning",
  "good afternoon",
  "good evening",
  "thanks",
  "thank you",
  "thanks a lot",
  "thank you so much",
  "thx",
  "ty",
  "cheers",
  "ok",
  "okay",
  "ok thanks",
  "okay thanks",
  "k",
  "yes",
  "yeah",
  "yep",
  "yup",
  "y",
  "no",
  "nope",
  "nah",
  "n",
  "sure",
  "cool",
  "great",
  "nice",
  "perfect",
  "got it",
  "sounds good",
  "lgtm",
  "continue",
  "go on",
  "go ahead",
  "proceed",
  "do it",
  "yes please",
  "please continue",
]);

/** Characters and shapes that mean code, paths or data are involved. */
const CODE_MARKERS = /[`{}[\]<>;=()\\/|$#]|\w\.\w{1,5}\b/;
/** Words that turn a short ask into real work. */
const WORK_WORDS =
  /\b(?:fix|implement|refactor|debug|write|add|create|build|optimi[sz]e|review|explain|design|why|migrate|port|test|rewrite|analy[sz]e|compare)\b/i;

/**
 * The auto policy's short-circuit: greetings, thanks, one-word confirmations and tiny asks
 * with no code never need a council.
 */
export function isTrivialAsk(ask: string): boolean {
  const normalized = ask.toLowerCase().replace(/[\s!.,?:;)(*~-]+$/u, "").replace(/\s+/g, " ")
    .trim();
  if (normalized === "" || SMALL_TALK.has(normalized)) return true;
  const words = normalized.split(" ");
  return words.length <= 3 && normalized.length <= 20 && !CODE_MARKERS.test(ask) &&
    !WORK_WORDS.test(normalized);
}

/** `councilSize` children over the agents round-robin: child 0 = agent 0. */
export function assignChildren(agents: readonly AgentConfig[], size: number): ChildPlan[] {
  const seen = new Map<string, number>();
  return Array.from({ length: Math.max(1, size) }, (_, index) => {
    const agentIndex = index % agents.length;
    const agent = agents[agentIndex];
    const n = (seen.get(agent.name) ?? 0) + 1;
    seen.set(agent.name, n);
    return {
      index,
      agentIndex,
      agent,
      label: n === 1 ? agent.name : `${agent.name}#${n}`,
      directive: true,
    };
  });
}

function single(agents: readonly AgentConfig[], agentIndex: number, reason: string): RunPlan {
  const agent = agents[agentIndex];
  return {
    kind: "single",
    reason,
    child: { index: 0, agentIndex, agent, label: agent.name, directive: true },
  };
}

/** The council's own model ids: a name for the whole council, never a model to pin a child to. */
const COUNCIL_MODEL = /^(?:svc|claude)-council$/i;

/** Whether an agent's runner serves a model's family (a codex CLI cannot run a claude model). */
function servesFamily(agent: AgentConfig, model: string): boolean {
  const family = modelFamily(model);
  return family !== undefined && familyRunners(family).includes(agent.runner);
}

/**
 * CONTRACT.md §1.1.5's background rule: one child of the model's family, no directive, pinned to the
 * model the host asked for. Housekeeping on the host's main model is pinned only when that
 * model is one the chosen agent can run (not the council's own id).
 */
function backgroundPlan(
  agents: readonly AgentConfig[],
  request: Pick<TurnRequest, "model" | "traffic">,
): RunPlan {
  const agentIndex = agentIndexForModel(agents, request.model);
  const agent = agents[agentIndex];
  const byModel = isBackgroundModel(request.model);
  const pinnable = isPinnableModel(request.model) && !COUNCIL_MODEL.test(request.model) &&
    (byModel || servesFamily(agent, request.model));
  // A model name that is not pinnable may hold anything: it is not repeated in the log.
  const why = request.traffic?.housekeeping
    ? `housekeeping (${request.traffic.reason})`
    : isPinnableModel(request.model)
    ? `background request (model ${request.model})`
    : "background request (requested model name not pinnable)";
  return {
    kind: "single",
    reason: pinnable
      ? `${why}: one agent, pinned to ${byModel ? "that model" : request.model}`
      : `${why}: one agent, its configured model`,
    child: {
      index: 0,
      agentIndex,
      agent,
      label: agent.name,
      ...(pinnable ? { model: request.model } : {}),
      directive: false,
    },
  };
}

/**
 * A compaction runs one child: agent 0, the synthesizer, on its configured model (never a
 * cheap one), with no directive. N agents summarising one transcript would cost N+1 summaries
 * for one that is kept.
 */
function compactionPlan(agents: readonly AgentConfig[], why: string): RunPlan {
  const agent = agents[0];
  return {
    kind: "single",
    reason: `compaction (${why}): one agent, the synthesizer`,
    child: { index: 0, agentIndex: 0, agent, label: agent.name, directive: false },
  };
}

/** Decides everything that needs no model call. `defaultAgents` must not be empty. */
export function planTurn(
  request: Pick<TurnRequest, "model" | "continuation" | "ask" | "traffic">,
  settings: PlanSettings,
): TurnPlan {
  const agents = settings.defaultAgents;
  if (request.traffic?.compaction) return compactionPlan(agents, request.traffic.reason);
  if (isBackgroundModel(request.model) || request.traffic?.housekeeping) {
    return backgroundPlan(agents, request);
  }
  if (request.continuation && settings.fanOutScope === "first-turn") {
    return single(agents, 0, "tool-loop continuation (fanOutScope first-turn)");
  }
  if (settings.councilSize <= 1) return single(agents, 0, "councilSize is 1");
  switch (settings.fanOutPolicy) {
    case "never":
      return single(agents, 0, "fanOutPolicy never");
    case "always":
      return {
        kind: "fanout",
        reason: "fanOutPolicy always",
        children: assignChildren(agents, settings.councilSize),
      };
    case "auto":
      if (isTrivialAsk(request.ask)) return single(agents, 0, "trivially simple ask");
      return { kind: "judge", bar: "auto", reason: "fanOutPolicy auto" };
    case "necessary":
      return { kind: "judge", bar: "necessary", reason: "fanOutPolicy necessary" };
  }
}

/** A plan ready to run: the judge, if any, has been heard. */
export type RunPlan = Exclude<TurnPlan, { kind: "judge" }>;

/** Turns the judge's verdict (undefined = failed or unparseable) into single / fanout. */
export function resolveVerdict(
  verdict: { fanOut: boolean; reason: string } | undefined,
  settings: PlanSettings,
  failure = "judge failed",
): RunPlan {
  if (!verdict) return single(settings.defaultAgents, 0, `${failure}: running one agent`);
  if (!verdict.fanOut) return single(settings.defaultAgents, 0, `judge: ${verdict.reason}`);
  return {
    kind: "fanout",
    reason: `judge: ${verdict.reason}`,
    children: assignChildren(settings.defaultAgents, settings.councilSize),
  };
}

/**
 * The cheap model of each HTTP runner's family, used by the default judge (a CLI's is in its
 * runner-table entry). An `openai` endpoint may be any server (Ollama, vLLM, …): its cheap model
 * is known only on OpenAI's own API.
 */
const CHEAP_API_MODELS: Record<HttpRunner, string | undefined> = {
  anthropic: "claude-haiku-4-5",
  openai: undefined,
};

/** The cheap model on OpenAI's own API, for an `openai` agent of the GPT family there. */
export const OPENAI_CHEAP_MODEL = "gpt-5-mini";

function cheapModelFor(runner: AgentConfig["runner"], baseUrl: string | undefined, model: string) {
  if (isCliRunner(runner)) return CLI_ADAPTERS[runner].family?.cheapModel;
  if (runner !== "openai") return CHEAP_API_MODELS[runner];
  let host = "";
  try {
    host = baseUrl ? new URL(baseUrl).hostname : "";
  } catch { /* checked at load; no cheap model then */ }
  return host === "api.openai.com" && modelFamily(model) === "codex"
    ? OPENAI_CHEAP_MODEL
    : undefined;
}

/** A judge that hangs must not hold the turn for a child's full time-out. */
export const JUDGE_TIMEOUT_MS = 60_000;

/**
 * The judge's agent entry: the `judge` config fields over agent 0's runner, command, args and
 * env (an HTTP runner's baseUrl, apiKeyEnv, headers and maxTokens), with the cheap model of the
 * runner's family. Empty args/env in `judge` count as unset (the schema fills them in), and so
 * does the default time-out.
 */
export function judgeAgent(
  agents: readonly AgentConfig[],
  judge: Config["judge"],
): AgentConfig {
  const base = agents[0];
  const runner = judge?.runner ?? base.runner;
  const sameRunner = runner === base.runner;
  const args = judge?.args?.length ? judge.args : sameRunner ? base.args : [];
  const env = { ...(sameRunner ? base.env : {}), ...(judge?.env ?? {}) };
  const command = judge?.command ?? (sameRunner ? base.command : undefined);
  const timeoutMs = judge?.timeoutMs && judge.timeoutMs !== DEFAULT_TIMEOUT_MS
    ? judge.timeoutMs
    : JUDGE_TIMEOUT_MS;
  const http: Partial<AgentConfig> = {};
  for (const field of ["baseUrl", "apiKeyEnv", "headers", "maxTokens"] as const) {
    const value = judge?.[field] ?? (sameRunner ? base[field] : undefined);
    if (value !== undefined) Object.assign(http, { [field]: value });
  }
  const model = judge?.model ?? cheapModelFor(runner, http.baseUrl, base.model) ?? base.model;
  return {
    name: judge?.name ?? "judge",
    runner,
    model,
    args,
    env,
    timeoutMs,
    ...(command ? { command } : {}),
    ...http,
  };
}

/**
 * The plan without agents that are cooling down: their children are dropped, and a single
 * child moves to the first agent in configured order that is not (with its own model). When
 * every agent is cooling down the plan stays as it is: trying them beats answering nothing.
 */
export function withoutCooling(
  plan: RunPlan,
  agents: readonly AgentConfig[],
  cooling: (agent: string) => boolean,
): { plan: RunPlan; skipped: string[] } {
  if (plan.kind === "fanout") {
    const children = plan.children.filter((c) => !cooling(c.agent.name));
    if (children.length === 0 || children.length === plan.children.length) {
      return { plan, skipped: [] };
    }
    const skipped = [...new Set(plan.children.map((c) => c.agent.name))].filter(cooling);
    return { plan: { ...plan, children }, skipped };
  }
  const { child } = plan;
  if (!cooling(child.agent.name)) return { plan, skipped: [] };
  const agentIndex = agents.findIndex((a) => !cooling(a.name));
  if (agentIndex < 0) return { plan, skipped: [] };
  const agent = agents[agentIndex];
  return {
    plan: {
      ...plan,
      child: { index: 0, agentIndex, agent, label: agent.name, directive: child.directive },
    },
    skipped: [child.agent.name],
  };
}
