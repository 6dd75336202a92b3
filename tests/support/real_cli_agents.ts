/**
 * Real agent CLIs pointed at a local model stub (for the read-only tests): an agent entry per
 * CLI, each with full-auto in its own args so that read-only access must win over them, and a
 * home directory each CLI accepts without a login.
 */
import type { AgentConfig } from "../../src/config/mod.ts";
import type { Stub } from "./model_api_stub.ts";

export type AgentFor = (command: string, stub: Stub, home: string) => AgentConfig;

export const claudeAgent: AgentFor = (command, stub, home) => ({
  name: "claude",
  runner: "claude",
  model: "opus",
  command,
  // Full-auto in the agent's own args: read-only access must still win.
  args: ["--dangerously-skip-permissions"],
  env: {
    HOME: home,
    ANTHROPIC_BASE_URL: stub.origin,
    ANTHROPIC_API_KEY: "test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
  },
  timeoutMs: 120_000,
});

export const codexAgent: AgentFor = (command, stub, home) => ({
  name: "codex",
  runner: "codex",
  model: "gpt-5.5",
  command,
  args: [
    "--sandbox",
    "danger-full-access",
    "-c",
    "model_provider=stub",
    "-c",
    `model_providers.stub={name="Stub",base_url="${stub.origin}/v1",wire_api="responses",` +
    `env_key="STUB_API_KEY"}`,
    "-c",
    "analytics.enabled=false",
  ],
  env: { HOME: home, CODEX_HOME: `${home}/.codex`, STUB_API_KEY: "test-key" },
  timeoutMs: 120_000,
});

export const geminiAgent: AgentFor = (command, stub, home) => ({
  name: "gemini",
  runner: "gemini",
  model: "gemini-2.5-flash",
  command,
  args: ["--yolo"],
  env: { HOME: home, GOOGLE_GEMINI_BASE_URL: stub.origin, GEMINI_API_KEY: "test-key" },
  timeoutMs: 120_000,
});

const GEMINI_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
};

/** Prepares `home` for all three CLIs (codex's dir, gemini's settings). */
export async function prepareHome(home: string): Promise<void> {
  await Deno.mkdir(`${home}/.codex`, { recursive: true });
  await Deno.mkdir(`${home}/.gemini`, { recursive: true });
  await Deno.writeTextFile(`${home}/.gemini/settings.json`, JSON.stringify(GEMINI_SETTINGS));
}
