/**
 * The runner table: one entry per agent CLI, each its adapter (agents/cli/<cli>.ts), which holds
 * everything the gateway knows of that CLI. Discovery, `doctor`, `init`, the context budget and
 * the council's plan read the CLIs from here; adding a CLI is one adapter and one entry.
 */
import {
  type AgentConfig,
  type AgentEntry,
  AgentSchema,
  CLI_RUNNERS,
  type CliRunner,
  type Config,
  isCliRunner,
  type Runner,
} from "../../config/mod.ts";
import { findOnPath } from "../../base/executables.ts";
import type { Adapter } from "../types.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { geminiAdapter } from "./gemini.ts";
import { opencodeAdapter } from "./opencode.ts";
import { commandAdapter } from "./plain_command.ts";

/** Each CLI runner's adapter, in the order discovery lists them. */
export const CLI_ADAPTERS: Readonly<Record<CliRunner, Adapter>> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  opencode: opencodeAdapter,
  command: commandAdapter,
};

/** The adapter of a runner, or undefined for an HTTP runner. */
export function cliAdapterOf(runner: Runner): Adapter | undefined {
  return isCliRunner(runner) ? CLI_ADAPTERS[runner] : undefined;
}

/** The adapter of a CLI agent; throws for an HTTP agent (a bug: those never reach a CLI run). */
export function cliAdapter(agent: Pick<AgentConfig, "runner">): Adapter {
  const adapter = cliAdapterOf(agent.runner);
  if (!adapter) throw new Error(`runner "${agent.runner}" is not a CLI runner`);
  return adapter;
}

/** The CLIs that discovery and `init` look for on PATH: those with a default model. */
export function discoverableClis(): { runner: CliRunner; command: string; model: string }[] {
  return CLI_RUNNERS.flatMap((runner) => {
    const { defaultCommand, defaultModel } = CLI_ADAPTERS[runner];
    return defaultCommand && defaultModel
      ? [{ runner, command: defaultCommand, model: defaultModel }]
      : [];
  });
}

/** The CLIs discovery looks for, for messages: "claude, codex, gemini or opencode". */
export function discoverableNames(): string {
  const names = discoverableClis().map((cli) => cli.runner);
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names.join("");
}

/** When no agents are configured: the agent CLIs found on PATH, each with its default model. */
export function discoverAgents(env: (name: string) => string | undefined): AgentEntry[] {
  return discoverableClis()
    .filter(({ command }) => findOnPath(command, env) !== null)
    .map(({ runner, model }) => AgentSchema.parse({ runner, model }));
}

/** The CLI runner whose model family a model id belongs to, if any serves it. */
export function familyRunnerOf(model: string): CliRunner | undefined {
  return CLI_RUNNERS.find((runner) => CLI_ADAPTERS[runner].family?.models.test(model));
}

/** Configured CLI agents whose executable is not there (on PATH, or at the path given). */
export function missingCommands(
  config: Pick<Config, "defaultAgents">,
  env: (name: string) => string | undefined,
): { agent: string; command: string }[] {
  return config.defaultAgents.flatMap((agent) => {
    const adapter = cliAdapterOf(agent.runner);
    if (!adapter) return [];
    const command = agent.command ?? adapter.defaultCommand;
    return findOnPath(command, env) === null ? [{ agent: agent.name, command }] : [];
  });
}
