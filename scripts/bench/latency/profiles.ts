/**
 * The latency bench's model profiles, one per vendor, each with the published figures it follows
 * and where they were published; and the council members that use them (HTTP agents, and the
 * real CLIs when installed), all pointed at the fake vendor API.
 */
import { join } from "node:path";
import type { LatencyProfile } from "../../../tests/support/fake_vendor/mod.ts";
import { CALLER_HEADER } from "../../../tests/support/fake_vendor/mod.ts";
import { type InstalledCli, MODELS, pointingArgs, pointingEnv } from "../realchain/clis.ts";

/** Output tokens of an unscripted answer (a short explanation with a code excerpt). */
const ANSWER_TOKENS = 500;
/** Each draw of time to first token and rate within ±15 % of the profile's. */
const JITTER = 0.15;

export type ProfileName = "anthropic" | "openai" | "gemini";

/** The default profiles: published time to first token and output speed per vendor. */
export const PROFILES: Readonly<Record<ProfileName, LatencyProfile>> = {
  anthropic: {
    ttftMs: 1800,
    tokensPerSecond: 63,
    answerTokens: ANSWER_TOKENS,
    jitter: JITTER,
    source: "Claude Sonnet 4.5 on Anthropic's API: 1.80 s to first token, 63 tokens/s " +
      "(Artificial Analysis, as quoted at https://lattice.uptownhr.com/claude-opus-4-5/" +
      "speed-analysis, Nov 2025)",
  },
  openai: {
    ttftMs: 890,
    tokensPerSecond: 80,
    answerTokens: ANSWER_TOKENS,
    jitter: JITTER,
    source: "GPT-5 (minimal reasoning) on OpenAI's API: 0.89 s to first token, 80 tokens/s " +
      "(https://artificialanalysis.ai/models/gpt-5-minimal/providers)",
  },
  gemini: {
    ttftMs: 11_000,
    tokensPerSecond: 275,
    answerTokens: ANSWER_TOKENS,
    jitter: JITTER,
    source: "Gemini 2.5 Flash (Sep 2025 preview, thinking): over 11 s to first token, about " +
      "275 tokens/s (Artificial Analysis figures, as quoted at https://shadabchow.com/blogs/" +
      "ai-models/gemini-2-5-flash-sep-reasoning)",
  },
};

/** A council member: its gateway agent entry and the profile the fake answers it with. */
export interface Member {
  name: string;
  profile: ProfileName;
  entry: Record<string, unknown>;
}

/** The variable the gateway reads the fake's "key" from. */
export const KEY_VARIABLE = "COUNCIL_LATENCY_FAKE_KEY";

/** HTTP members: one per vendor profile (the first, Anthropic, synthesizes). */
export function httpMembers(origin: string): Member[] {
  const http = (name: string, profile: ProfileName, entry: Record<string, unknown>): Member => ({
    name,
    profile,
    entry: { name, apiKeyEnv: KEY_VARIABLE, headers: { [CALLER_HEADER]: name }, ...entry },
  });
  return [
    http("sonnet", "anthropic", {
      runner: "anthropic",
      model: "claude-sonnet-4-5",
      baseUrl: origin,
    }),
    http("gpt", "openai", { runner: "openai", model: "gpt-5", baseUrl: `${origin}/v1` }),
    http("flash", "gemini", {
      runner: "openai",
      model: "gemini-2.5-flash",
      baseUrl: `${origin}/v1`,
    }),
  ];
}

const CLI_PROFILES: Record<InstalledCli["vendor"], ProfileName> = {
  claude: "anthropic",
  codex: "openai",
  gemini: "gemini",
};

/** Real CLI members (claude synthesizes when installed); the fake knows them by their API. */
export function cliMembers(clis: InstalledCli[], origin: string, home: string): Member[] {
  return clis.map((cli) => ({
    name: cli.vendor,
    profile: CLI_PROFILES[cli.vendor],
    entry: {
      name: cli.vendor,
      runner: cli.vendor,
      model: MODELS[cli.vendor],
      command: cli.path,
      args: pointingArgs(cli.vendor, origin),
      env: pointingEnv(cli.vendor, origin, home),
      timeoutMs: 120_000,
    },
  }));
}

/** The fake's profiles by caller: HTTP members by name, CLIs by the API they speak. */
export function profilesByCaller(members: Member[]): Record<string, LatencyProfile> {
  return {
    messages: PROFILES.anthropic,
    responses: PROFILES.openai,
    gemini: PROFILES.gemini,
    ...Object.fromEntries(members.map((m) => [m.name, PROFILES[m.profile]])),
  };
}

/** A scratch HOME for the CLIs under `dir`. */
export const cliHome = (dir: string) => join(dir, "latency-home");
