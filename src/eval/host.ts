/**
 * The host a run drives headless in its copy, pointed at the run's gateway: Claude Code
 * (`claude -p`, the default) or Codex (`codex exec`), as `connect` would configure them.
 */
import { findOnPath } from "../base/executables.ts";
import { codexLaunch } from "../cli/launch.ts";
import { claudeEnvironment } from "../cli/connect.ts";

export type HostName = "claude" | "codex";
export const HOSTS: readonly HostName[] = ["claude", "codex"];

/** The npm package that installs each host's CLI. */
const PACKAGES: Record<HostName, string> = {
  claude: "@anthropic-ai/claude-code",
  codex: "@openai/codex",
};

export interface HostPlan {
  args: string[];
  /** Set over the run's environment. */
  env: Record<string, string>;
}

/** The gateway a run's gateway is configured with: no token (loopback), no key pass-through. */
const RUN_AUTH = { token: undefined, passApiKeys: false };

/** How the host is run for one prompt against the gateway at `origin` (pure). */
export function hostPlan(host: HostName, origin: string, prompt: string): HostPlan {
  if (host === "codex") {
    const plan = codexLaunch(RUN_AUTH, origin, [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--sandbox",
      "workspace-write",
      prompt,
    ]);
    return { args: plan.args, env: plan.env };
  }
  return {
    // Headless: edits and shell commands in the throwaway copy are allowed without asking.
    args: [
      "-p",
      prompt,
      "--output-format",
      "json",
      "--permission-mode",
      "acceptEdits",
      "--allowed-tools",
      "Bash Read Edit Write",
    ],
    env: { ...claudeEnvironment(RUN_AUTH, origin), DISABLE_AUTOUPDATER: "1" },
  };
}

/**
 * The host's executable: `command` when given (a path or a name on PATH), else the host's CLI on
 * PATH. Throws naming the CLI and how to install it.
 */
export function findHost(
  host: HostName,
  command: string | undefined,
  env: (name: string) => string | undefined,
): string {
  const wanted = command ?? host;
  const found = findOnPath(wanted, env);
  if (found) return found;
  throw new Error(
    `the host CLI ${wanted} was not found${command ? "" : " on PATH"}: install it with ` +
      `'npm install -g ${PACKAGES[host]}' (or name it with --host-command PATH)`,
  );
}

/**
 * Whether a variable stays out of the host's (and the task commands') environment: the user's own
 * endpoints, keys and provider switches for the hosts would let the host bypass the run's gateway
 * or reach a real account; the gateway's children get theirs from the gateway's environment.
 */
export function hiddenFromHost(name: string): boolean {
  return /^(ANTHROPIC|OPENAI)_/.test(name) || /^CLAUDE_CODE_USE_/.test(name) ||
    /^(CODEX|CLAUDE_CODE)_\w*(KEY|TOKEN|SECRET)/.test(name);
}

/** The environment a run's host and commands start from. */
export function hostEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !hiddenFromHost(name)));
}
