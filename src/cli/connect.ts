/**
 * `connect claude|codex`: the exact settings that point a host CLI at this gateway.
 */
import type { Config } from "../config/mod.ts";
import { urlHost } from "../base/origins.ts";
import { councilContextTokens } from "../server/council_window.ts";

/** The variable Codex reads the gateway token from (`env_key` of the provider block). */
export const CODEX_ENV_KEY = "COUNCIL_GATEWAY_TOKEN";
/** The provider id in Codex's config.toml. */
export const CODEX_PROVIDER_ID = "council";
/** The model pinned for Codex (any id works; the gateway accepts every request shape). */
export const CODEX_MODEL = "gpt-5.5";
/**
 * The model Codex 0.169 offers to switch to on start ("Try new model"). Recording the offer as
 * seen under `[notice.model_migrations]` keeps `model` as configured.
 */
export const CODEX_OFFERED_MODEL = "gpt-6-sol";
/**
 * Sent when auth is off: the gateway ignores it, but the hosts need a non-empty credential
 * (Codex refuses an empty `env_key`; Claude Code would otherwise ask for a login).
 */
export const PLACEHOLDER_TOKEN = "council-gateway-no-auth";

/** Quotes a value for POSIX shells when it needs quoting. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_\-.,:/@%+=]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The origin a client on this machine uses (a wildcard bind is reached via loopback). */
export function clientOrigin(config: Pick<Config, "host" | "port">): string {
  const host = config.host === "0.0.0.0"
    ? "127.0.0.1"
    : config.host === "::" || config.host === "[::]"
    ? "::1"
    : config.host;
  return `http://${urlHost(host)}:${config.port}`;
}

type ConnectConfig =
  & Pick<Config, "host" | "port" | "token" | "passApiKeys">
  & Partial<Pick<Config, "defaultAgents">>;

/**
 * The variable Claude Code (2.1.332) reads as the context window of a model id it does not know
 * (the council's): it then compacts before the smallest member's window overflows.
 */
export const CLAUDE_CONTEXT_VARIABLE = "CLAUDE_CODE_MAX_CONTEXT_TOKENS";
/**
 * For the model ids it knows (its default model, say) Claude Code reads the window to compact
 * at from here instead, and only from 100k tokens up (a smaller value is raised to that).
 */
export const CLAUDE_COMPACT_WINDOW_VARIABLE = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
export const CLAUDE_MIN_COMPACT_WINDOW = 100_000;

/**
 * The variables Claude Code needs to use the gateway at `origin`: its base URL, a credential
 * (the token; a placeholder when auth is off, unless the host's own keys are passed through), no
 * traffic to anywhere else, hint headers on each request, model discovery and the council's
 * context window.
 */
export function claudeEnvironment(
  config: Pick<ConnectConfig, "token" | "passApiKeys" | "defaultAgents">,
  origin: string,
): Record<string, string> {
  const env: Record<string, string> = { ANTHROPIC_BASE_URL: origin };
  if (config.token) env.ANTHROPIC_AUTH_TOKEN = config.token;
  else if (!config.passApiKeys) env.ANTHROPIC_AUTH_TOKEN = PLACEHOLDER_TOKEN;
  env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1";
  env.CLAUDE_CODE_GATEWAY_HINT_HEADERS = "1";
  env.CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY = "1";
  const window = councilContextTokens(config.defaultAgents ?? []);
  if (window) env[CLAUDE_CONTEXT_VARIABLE] = String(window);
  if (window && window >= CLAUDE_MIN_COMPACT_WINDOW) {
    env[CLAUDE_COMPACT_WINDOW_VARIABLE] = String(window);
  }
  return env;
}

/** Claude Code settings that show the council live in its status line (re-run every second). */
export function claudeStatusLineSettings(command: string): { statusLine: Record<string, unknown> } {
  return { statusLine: { type: "command", command, padding: 0, refreshInterval: 1 } };
}

/** Shell exports for Claude Code, then the status line settings as comments. */
export function claudeExports(config: ConnectConfig, statusLineCommand?: string): string {
  const origin = clientOrigin(config);
  const env = claudeEnvironment(config, origin);
  const lines = [
    `# Claude Code -> council-gateway at ${origin}`,
    `# Paste into your shell (or: eval "$(council-gateway connect claude)"), then run claude.`,
    `export ANTHROPIC_BASE_URL=${shellQuote(origin)}`,
  ];
  if (config.token) {
    lines.push(`export ANTHROPIC_AUTH_TOKEN=${shellQuote(config.token)}`);
  } else if (!config.passApiKeys) {
    lines.push(
      "# Auth is off: this placeholder only lets Claude Code start without a login.",
      `export ANTHROPIC_AUTH_TOKEN=${env.ANTHROPIC_AUTH_TOKEN}`,
    );
  } else {
    lines.push("# Auth is off and passApiKeys is on: your own Anthropic credentials are used.");
  }
  lines.push(
    "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
    "# Label each request (main, subagent, title, compaction…) so housekeeping runs one agent.",
    "export CLAUDE_CODE_GATEWAY_HINT_HEADERS=1",
    "# Ask the gateway for its models: the council appears in /model as claude-council.",
    "export CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1",
  );
  if (env[CLAUDE_CONTEXT_VARIABLE]) {
    lines.push(
      "# The council's context window (its smallest member's): Claude Code compacts before it,",
      "# as claude-council (first line) and as a model it knows (second; only from 100k up).",
      `export ${CLAUDE_CONTEXT_VARIABLE}=${env[CLAUDE_CONTEXT_VARIABLE]}`,
    );
    if (env[CLAUDE_COMPACT_WINDOW_VARIABLE]) {
      lines.push(`export ${CLAUDE_COMPACT_WINDOW_VARIABLE}=${env[CLAUDE_COMPACT_WINDOW_VARIABLE]}`);
    }
  }
  if (statusLineCommand) {
    const settings = JSON.stringify(claudeStatusLineSettings(statusLineCommand).statusLine);
    lines.push(
      "# To watch the council live, add this to ~/.claude/settings.json (or print only the",
      "# JSON: council-gateway connect claude --settings):",
      `#   "statusLine": ${settings}`,
    );
  }
  return lines.join("\n") + "\n";
}

function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** The config.toml lines for Codex (valid TOML on its own). */
export function codexToml(config: ConnectConfig): string {
  const origin = clientOrigin(config);
  return [
    `# Codex CLI -> council-gateway: add to $CODEX_HOME/config.toml (default ~/.codex/config.toml).`,
    `# The two top-level keys must come before any [table] in that file.`,
    `# Any model id works with the gateway; \`model\` is only what Codex asks for.`,
    `model = ${tomlString(CODEX_MODEL)}`,
    `model_provider = ${tomlString(CODEX_PROVIDER_ID)}`,
    ``,
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    `name = "Council Gateway"`,
    `base_url = ${tomlString(`${origin}/v1`)}`,
    `wire_api = "responses"`,
    `env_key = ${tomlString(CODEX_ENV_KEY)}`,
    ``,
    `# Keeps the model pinned: Codex offers a newer model on start and, if accepted, rewrites`,
    `# \`model\` above. This marks the offer as seen (or answer "Use existing model"; \`codex -m ID\``,
    `# pins one run). Leave it out if your file already has a [notice.model_migrations] table.`,
    `[notice.model_migrations]`,
    `${tomlString(CODEX_MODEL)} = ${tomlString(CODEX_OFFERED_MODEL)}`,
  ].join("\n") + "\n";
}

/** The shell export Codex's `env_key` needs (never empty). */
export function codexEnv(config: ConnectConfig): string {
  const lines = [];
  if (!config.token) lines.push("# Auth is off: any non-empty value works; Codex requires one.");
  lines.push(`export ${CODEX_ENV_KEY}=${shellQuote(config.token || PLACEHOLDER_TOKEN)}`);
  return lines.join("\n") + "\n";
}

/** Both parts for Codex, in order. */
export function codexInstructions(config: ConnectConfig): string {
  return codexToml(config) + "\n# Then, in the shell that runs codex:\n" + codexEnv(config);
}
