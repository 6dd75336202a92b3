/**
 * The eval's arms: each a gateway configuration to run the tasks with — `council` (as
 * configured), `solo:<agent>`, `best-of:<agent>:<N>` (that member N times, picking among its own
 * attempts), or `NAME=FILE` (any configuration file).
 */
import type { AgentConfig, Config } from "../config/mod.ts";

/** A configuration file's contents as a plain object (YAML/JSON mapping). */
export type ConfigObject = Record<string, unknown>;

export interface Arm {
  /** How results and reports name it: the spec as given, or NAME of `NAME=FILE`. */
  name: string;
  kind: "council" | "solo" | "best-of" | "file";
  /** The configuration the arm's gateway runs with (port and ledger are set per run). */
  config: ConfigObject;
}

/** A wrong `--arm`: a usage error. */
export class ArmError extends Error {
  override name = "ArmError";
}

const HTTP_RUNNERS = new Set(["anthropic", "openai"]);

/** An effective agent as a `defaultAgents` entry again (what its runner refuses left out). */
export function agentEntry(agent: AgentConfig): ConfigObject {
  const entry: ConfigObject = { ...agent };
  if (HTTP_RUNNERS.has(agent.runner) || agent.args.length === 0) delete entry.args;
  if (HTTP_RUNNERS.has(agent.runner) || Object.keys(agent.env).length === 0) delete entry.env;
  return entry;
}

function agentNamed(config: Readonly<Config>, name: string, spec: string): AgentConfig {
  const agent = config.defaultAgents.find((a) => a.name === name);
  if (agent) return agent;
  const known = config.defaultAgents.map((a) => a.name).join(", ") || "none";
  throw new ArmError(`--arm ${spec}: no agent named ${JSON.stringify(name)} (agents: ${known})`);
}

/** The base configuration with these agents and council size (none: the agents' count). */
function withAgents(base: ConfigObject, agents: ConfigObject[], size?: number): ConfigObject {
  const config: ConfigObject = { ...base, defaultAgents: agents };
  delete config.councilSize;
  if (size !== undefined) config.councilSize = size;
  return config;
}

/**
 * The arm a spec names. `base` is the configuration as the user has it (file with env applied),
 * `config` its effective form (agents resolved); `readFile` reads a `NAME=FILE` arm's file.
 */
export function parseArm(
  spec: string,
  base: ConfigObject,
  config: Readonly<Config>,
  readFile: (path: string) => ConfigObject,
): Arm {
  const file = /^([A-Za-z0-9_.:-]+)=(.+)$/.exec(spec);
  if (file) return { name: file[1], kind: "file", config: readFile(file[2]) };
  const agents = config.defaultAgents.map(agentEntry);
  if (spec === "council") return { name: spec, kind: "council", config: withAgents(base, agents) };
  const solo = /^solo:(.+)$/.exec(spec);
  if (solo) {
    const agent = agentEntry(agentNamed(config, solo[1], spec));
    return { name: spec, kind: "solo", config: withAgents(base, [agent]) };
  }
  const bestOf = /^best-of:(.+):(\d+)$/.exec(spec);
  if (bestOf) {
    const count = Number(bestOf[2]);
    if (count < 1 || count > 16) throw new ArmError(`--arm ${spec}: N must be 1 to 16`);
    const agent = agentEntry(agentNamed(config, bestOf[1], spec));
    // Copies named alike are told apart by the gateway (claude, claude-2, …); copy 0 picks.
    const copies = Array.from({ length: count }, () => ({ ...agent }));
    return { name: spec, kind: "best-of", config: withAgents(base, copies, count) };
  }
  throw new ArmError(
    `--arm ${JSON.stringify(spec)}: expected council, solo:<agent>, best-of:<agent>:<N> or ` +
      `NAME=FILE`,
  );
}

/** The arms to run: those given, else the council and each of its agents alone. */
export function resolveArms(
  specs: readonly string[],
  base: ConfigObject,
  config: Readonly<Config>,
  readFile: (path: string) => ConfigObject,
): Arm[] {
  const given = specs.length > 0
    ? specs
    : ["council", ...new Set(config.defaultAgents.map((a) => `solo:${a.name}`))];
  const arms = given.map((spec) => parseArm(spec, base, config, readFile));
  const seen = new Set<string>();
  for (const arm of arms) {
    if (seen.has(arm.name)) throw new ArmError(`--arm ${arm.name} is given twice`);
    seen.add(arm.name);
  }
  return arms;
}
