/**
 * Reads the user's Codex config (`$CODEX_HOME/config.toml`, default `~/.codex/config.toml`) to
 * tell whether its default model provider is this gateway, so a Codex child must be sent
 * elsewhere.
 */
import { join } from "node:path";
import { parse } from "smol-toml";
import { pointsAtSelf } from "../child_env.ts";

type Table = Record<string, unknown>;

function table(value: unknown): Table {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value as Table : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value : undefined;
}

/** The base URL of the provider the config picks (its active profile's, else the top level's). */
function defaultProviderUrl(
  config: Table,
  env: Readonly<Record<string, string>>,
): string | undefined {
  const profileName = text(config.profile);
  const profile = profileName ? table(table(config.profiles)[profileName]) : {};
  const providerId = text(profile.model_provider) ?? text(config.model_provider) ?? "openai";
  const provider = table(table(config.model_providers)[providerId]);
  const url = text(provider.base_url);
  if (url || providerId !== "openai") return url;
  return text(config.openai_base_url) ?? text(env.OPENAI_BASE_URL);
}

/**
 * Whether a Codex child with environment `env` would send its requests back to this gateway
 * (the user followed `connect codex`). A missing or unreadable config means it would not.
 */
export async function codexProviderIsGateway(
  env: Readonly<Record<string, string>>,
  selfOrigins: readonly string[],
): Promise<boolean> {
  const home = env.CODEX_HOME || (env.HOME ? join(env.HOME, ".codex") : undefined);
  if (!home || selfOrigins.length === 0) return false;
  let config: Table;
  try {
    config = parse(await Deno.readTextFile(join(home, "config.toml")));
  } catch {
    return false;
  }
  const url = defaultProviderUrl(config, env);
  return url !== undefined && pointsAtSelf("base_url", url, selfOrigins);
}
