/**
 * `claude [args…]` / `codex [args…]`: run the host CLI against the gateway, with the environment
 * `connect` prints (Claude Code also gets the council status line), in the same terminal.
 */
import type { Config } from "../config/mod.ts";
import { findOnPath } from "../base/executables.ts";
import {
  claudeEnvironment,
  claudeStatusLineSettings,
  CODEX_ENV_KEY,
  CODEX_MODEL,
  CODEX_OFFERED_MODEL,
  CODEX_PROVIDER_ID,
  PLACEHOLDER_TOKEN,
} from "./connect.ts";

type Host = "claude" | "codex";

interface LaunchPlan {
  /** The executable to look up on PATH. */
  command: Host;
  args: string[];
  /** Set over the inherited environment. */
  env: Record<string, string>;
}

type LaunchConfig = Pick<Config, "token" | "passApiKeys"> & Partial<Pick<Config, "defaultAgents">>;

/**
 * Claude Code with the gateway's environment; unless the user passes settings of their own,
 * `--settings` adds the council status line for this run only.
 */
export function claudeLaunch(
  config: LaunchConfig,
  origin: string,
  userArgs: readonly string[],
  statusLineCommand: string,
): LaunchPlan {
  const ownSettings = userArgs.some((arg) => arg === "--settings" || arg.startsWith("--settings="));
  const settings = JSON.stringify(claudeStatusLineSettings(statusLineCommand));
  return {
    command: "claude",
    args: ownSettings ? [...userArgs] : ["--settings", settings, ...userArgs],
    env: claudeEnvironment(config, origin),
  };
}

/** TOML string (a JSON string is a valid TOML basic string). */
const toml = (value: string) => JSON.stringify(value);

/**
 * Codex with the gateway as its model provider, given as `-c` overrides (the same as the
 * config.toml block `connect codex` prints); a user's own `-c` later on the line wins.
 */
export function codexLaunch(
  config: LaunchConfig,
  origin: string,
  userArgs: readonly string[],
): LaunchPlan {
  const provider = `{name=${toml("Council Gateway")},base_url=${toml(`${origin}/v1`)},` +
    `wire_api=${toml("responses")},env_key=${toml(CODEX_ENV_KEY)}}`;
  return {
    command: "codex",
    args: [
      "-c",
      `model_provider=${toml(CODEX_PROVIDER_ID)}`,
      "-c",
      `model_providers.${CODEX_PROVIDER_ID}=${provider}`,
      "-c",
      `model=${toml(CODEX_MODEL)}`,
      // Codex offers a newer model at start; marking the offer seen keeps the model pinned.
      "-c",
      `notice.model_migrations={${toml(CODEX_MODEL)}=${toml(CODEX_OFFERED_MODEL)}}`,
      ...userArgs,
    ],
    env: { [CODEX_ENV_KEY]: config.token || PLACEHOLDER_TOKEN },
  };
}

/**
 * Runs the host in this terminal and returns its exit code. The terminal's Ctrl-C reaches the
 * host directly (same process group); this process only waits, and passes on a SIGTERM or
 * SIGHUP it gets so the host is never left behind.
 */
export async function runHost(
  plan: LaunchPlan,
  env: (name: string) => string | undefined,
  stderr: (text: string) => void,
): Promise<number> {
  const executable = findOnPath(plan.command, env);
  if (!executable) {
    stderr(`council-gateway: ${plan.command} not found on PATH\n`);
    return 127;
  }
  const child = new Deno.Command(executable, {
    args: plan.args,
    env: plan.env,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const ignore = () => {};
  const forward: [Deno.Signal, () => void][] = (["SIGTERM", "SIGHUP"] as const).map((sig) => [
    sig,
    () => {
      try {
        child.kill(sig);
      } catch { /* ended */ }
    },
  ]);
  const posix = Deno.build.os !== "windows";
  if (posix) {
    Deno.addSignalListener("SIGINT", ignore);
    for (const [sig, fn] of forward) Deno.addSignalListener(sig, fn);
  }
  try {
    const status = await child.status;
    return status.signal ? 128 + signalNumber(status.signal) : status.code;
  } finally {
    if (posix) {
      Deno.removeSignalListener("SIGINT", ignore);
      for (const [sig, fn] of forward) Deno.removeSignalListener(sig, fn);
    }
  }
}

const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGKILL: 9,
  SIGTERM: 15,
};

function signalNumber(signal: Deno.Signal): number {
  return SIGNAL_NUMBERS[signal] ?? 1;
}
