/** Configured CLI agents whose executable is not there (on PATH, or at the path given). */
import { findOnPath } from "../base/executables.ts";
import { type Config, isHttpRunner } from "./schema.ts";

type Env = (name: string) => string | undefined;

interface MissingCommand {
  agent: string;
  command: string;
}

export function missingCommands(config: Pick<Config, "defaultAgents">, env: Env): MissingCommand[] {
  return config.defaultAgents.flatMap((agent) => {
    if (isHttpRunner(agent.runner)) return [];
    const command = agent.command ?? agent.runner;
    return findOnPath(command, env) === null ? [{ agent: agent.name, command }] : [];
  });
}
