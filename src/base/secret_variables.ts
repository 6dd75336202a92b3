/** The environment variables whose values are secrets: provider credentials and our token. */

/** Provider credentials (docs/protocols.md §4.5), kept only when `passApiKeys` is on. */
export const CREDENTIAL_VARIABLES: readonly string[] = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
  "CODEX_ACCESS_TOKEN",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "CURSOR_API_KEY",
];

/**
 * Where a user's shell may hold the gateway's own token (besides SVC_*): `connect codex` exports
 * it under this name. Never a child's business.
 */
export const GATEWAY_TOKEN_VARIABLES: readonly string[] = ["COUNCIL_GATEWAY_TOKEN"];

/**
 * The variables that agent entries name as holding their API key (`apiKeyEnv` of HTTP agents
 * and of the judge), besides the well-known ones: their values are secrets too.
 */
export function apiKeyVariables(
  agents: readonly ({ apiKeyEnv?: string } | undefined)[],
): string[] {
  const named = agents.flatMap((agent) => agent?.apiKeyEnv ?? []);
  return [...new Set(named)].filter((name) => !CREDENTIAL_VARIABLES.includes(name));
}
