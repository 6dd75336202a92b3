/**
 * Whether a CLI child's own prompt caching reuses what earlier turns sent: the real CLI (claude,
 * codex, gemini) runs the gateway's prompts for consecutive requests of one session against the
 * caching stub (upstream_calls.ts), and for each turn we keep how much of its upstream request
 * repeats the previous turn's from the start, what the real API would read from its cache, and
 * what the CLI itself reports as cache reads.
 */
import { join } from "node:path";
import type { AgentConfig } from "../../../src/config/mod.ts";
import { createAgentRunner } from "../../../src/agents/run.ts";
import { promptText } from "../../../src/agents/prompt_text.ts";
import { cacheKeyOf } from "../../../src/council/prompt/compose.ts";
import { actionPrompt } from "../../../src/council/prompt/prompts.ts";
import {
  MessagesRequestSchema,
  messagesTurnInput,
} from "../../../src/protocol/messages/request.ts";
import { contextTokensOf } from "../../../src/agents/context_budget.ts";
import {
  type CacheUpstream,
  commonPrefix,
  startCacheUpstream,
  type UpstreamCall,
} from "../../../scripts/bench/upstream_calls.ts";

export type CliName = "claude" | "codex" | "gemini";

/** One turn of a CLI child, measured. */
export interface CliTurn {
  /** Characters of the gateway's prompt (what the child reads on stdin). */
  promptChars: number;
  /** Characters of that prompt identical to the previous turn's from its start. */
  promptRepeated: number;
  /** The CLI's main upstream request (the largest of the turn). */
  upstream?: Pick<UpstreamCall, "bytes" | "promptChars" | "repeatedChars" | "cache">;
  /** Upstream requests the turn made. */
  calls: number;
  /** Cache reads the CLI reported (its own usage), if any. */
  reportedCacheRead?: number;
  reportedInput: number;
  ok: boolean;
  error?: string;
}

/** The agent entry that runs `cli` at `path` against the stub, with a private HOME. */
export async function cliAgent(
  cli: CliName,
  path: string,
  origin: string,
  home: string,
  model?: string,
): Promise<AgentConfig> {
  const base = { name: `${cli}-real`, command: path, timeoutMs: 180_000 };
  if (cli === "claude") {
    return {
      ...base,
      runner: "claude",
      model: model ?? "claude-sonnet-4-5",
      args: [],
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: origin,
        ANTHROPIC_API_KEY: "bench-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_MAX_RETRIES: "0",
      },
    };
  }
  if (cli === "codex") {
    await Deno.mkdir(join(home, ".codex"), { recursive: true });
    const provider = `model_providers.stub={name="Stub",base_url="${origin}/v1",` +
      `wire_api="responses",env_key="STUB_API_KEY"}`;
    return {
      ...base,
      runner: "codex",
      model: model ?? "gpt-5.5",
      args: ["-c", "model_provider=stub", "-c", provider, "-c", "analytics.enabled=false"],
      env: { HOME: home, CODEX_HOME: join(home, ".codex"), STUB_API_KEY: "bench-key" },
    };
  }
  await Deno.mkdir(join(home, ".gemini"), { recursive: true });
  await Deno.writeTextFile(
    join(home, ".gemini", "settings.json"),
    JSON.stringify({
      security: { auth: { selectedType: "gemini-api-key" } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    }),
  );
  return {
    ...base,
    runner: "gemini",
    model: model ?? "gemini-2.5-flash",
    args: [],
    env: { HOME: home, GOOGLE_GEMINI_BASE_URL: origin, GEMINI_API_KEY: "bench-key" },
  };
}

/** The reply every CLI gets: a final answer, so it makes no tool calls of its own. */
function reply(): string {
  return '{"kind":"answer","text":"Done."}';
}

/**
 * Runs `cli` on the gateway's action prompt for each host request body in turn (one child per
 * request, as the gateway runs them), in `cwd`.
 */
export async function measureCli(
  cli: CliName,
  path: string,
  bodies: Record<string, unknown>[],
  cwd: string,
  model?: string,
): Promise<{ turns: CliTurn[]; upstream: CacheUpstream }> {
  const upstream = startCacheUpstream(reply);
  const home = await Deno.makeTempDir({ prefix: `council-${cli}-home-` });
  const runner = createAgentRunner({
    passApiKeys: false,
    selfOrigins: () => [],
    pricing: {},
    baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    killGraceMs: 1000,
  });
  const agent = await cliAgent(cli, path, upstream.origin, home, model);
  const turns: CliTurn[] = [];
  let previous = "";
  try {
    for (const body of bodies) {
      const input = messagesTurnInput(MessagesRequestSchema.parse(body));
      const fit = { contextTokens: contextTokensOf(agent), cacheKey: cacheKeyOf("cli-bench") };
      const prompt = actionPrompt(input, input.tools, false, fit);
      const text = promptText(prompt);
      const before = upstream.calls.length;
      const result = await runner(agent, prompt, { role: "child", cwd });
      const calls = upstream.calls.slice(before);
      const main = calls.reduce<UpstreamCall | undefined>(
        (a, b) => (a && a.promptChars >= b.promptChars ? a : b),
        undefined,
      );
      turns.push({
        promptChars: text.length,
        promptRepeated: commonPrefix(previous, text),
        ...(main
          ? {
            upstream: {
              bytes: main.bytes,
              promptChars: main.promptChars,
              repeatedChars: main.repeatedChars,
              cache: main.cache,
            },
          }
          : {}),
        calls: calls.length,
        ...(result.usage.cacheReadTokens !== undefined
          ? { reportedCacheRead: result.usage.cacheReadTokens }
          : {}),
        reportedInput: result.usage.inputTokens,
        ok: result.ok,
        ...(result.error ? { error: result.error } : {}),
      });
      previous = text;
    }
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
  return { turns, upstream };
}
