/**
 * The host and child CLI versions the real-CLI tests run: the pins `.ci/run` installs (a test
 * keeps the two equal), or the newest ones `deno task compat` names through the environment.
 */
export const PINNED_VERSIONS = {
  claude: "2.1.332",
  claudeOld: "2.1.197",
  codex: "0.171.0",
  codexOld: "0.169.0",
  gemini: "0.61.0",
} as const;

/** The versions under test: the pins, or `COUNCIL_TEST_{CLAUDE,CODEX,GEMINI}_VERSION`. */
export const HOST_VERSIONS = {
  ...PINNED_VERSIONS,
  claude: Deno.env.get("COUNCIL_TEST_CLAUDE_VERSION") ?? PINNED_VERSIONS.claude,
  codex: Deno.env.get("COUNCIL_TEST_CODEX_VERSION") ?? PINNED_VERSIONS.codex,
  gemini: Deno.env.get("COUNCIL_TEST_GEMINI_VERSION") ?? PINNED_VERSIONS.gemini,
};
