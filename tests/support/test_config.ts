/** The tests' way to a `Config`: config-file keys validated as `loadConfig` does, no file, no env. */
import {
  type AgentConfig,
  type Config,
  type ConfigFile,
  nameAgents,
  parseConfigObject,
} from "../../src/config/mod.ts";

/**
 * The effective config of these config-file keys. `agents`, when given, are the council as they
 * are (e.g. fake CLIs with their own names) in place of the file's `defaultAgents`.
 */
export function configOf(file: ConfigFile = {}, agents?: AgentConfig[]): Config {
  const parsed = parseConfigObject(file);
  const named = agents ?? nameAgents(parsed.defaultAgents ?? []);
  return {
    ...parsed,
    configPath: null,
    defaultAgents: named,
    councilSize: parsed.councilSize ?? Math.max(named.length, 1),
  };
}
