/**
 * The real hosts for the end-to-end tests: where the pinned CLIs are, each host's environment
 * exactly as `council-gateway connect claude|codex` prints it, and how to run one prompt.
 *
 * The host CLIs are installed by `.ci/run` (pinned, into $COUNCIL_TEST_CLI_DIR, default
 * ~/.cache/council-gateway-test). Without them the tests using them are skipped loudly.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findTestCli } from "../support/agent_runner.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { connect, isolatedEnv, jsonLines, parseExports, run } from "../support/gateway_process.ts";
import { HOST_VERSIONS } from "./host_versions.ts";

export { HOST_VERSIONS };

const exactly = (version: string) => version.replaceAll(".", "\\.");

export const claude = findTestCli(
  "claude",
  new RegExp(`^${exactly(HOST_VERSIONS.claude)} \\(Claude Code\\)`),
);
export const claudeOld = findTestCli(
  "claude",
  new RegExp(`^${exactly(HOST_VERSIONS.claudeOld)} \\(Claude Code\\)`),
  `claude-${HOST_VERSIONS.claudeOld}`,
);
export const codex = findTestCli(
  "codex",
  new RegExp(`^codex-cli ${exactly(HOST_VERSIONS.codex)}$`, "m"),
);
export const codexOld = findTestCli(
  "codex",
  new RegExp(`^codex-cli ${exactly(HOST_VERSIONS.codexOld)}$`, "m"),
  `codex-${HOST_VERSIONS.codexOld}`,
);
/** Each pinned Claude Code (newest, old) with where it is installed, for tests run on both. */
export const CLAUDE_CODES = [
  [HOST_VERSIONS.claude, claude],
  [HOST_VERSIONS.claudeOld, claudeOld],
] as const;
/** Each pinned Codex (newest, old) with where it is installed, for tests run on both. */
export const CODEXES = [[HOST_VERSIONS.codex, codex], [HOST_VERSIONS.codexOld, codexOld]] as const;

for (
  const [name, cli] of [
    [`claude ${HOST_VERSIONS.claude}`, claude],
    [`claude ${HOST_VERSIONS.claudeOld}`, claudeOld],
    [`codex ${HOST_VERSIONS.codex}`, codex],
    [`codex ${HOST_VERSIONS.codexOld}`, codexOld],
  ] as const
) {
  if (!cli.path) console.log(`\n*** e2e hosts: ${name} tests SKIPPED: ${cli.reason} ***\n`);
}

export const TOKEN = "e2e-host-token-5150";

/** Three fake agents (claude, codex, gemini fakes) that log every invocation to `log`. */
export function fakeCouncil(
  log: string,
  replies: { claude: string; codex: string; gemini: string },
  synthRules: { match: string; reply: string }[] = [],
) {
  return [
    fakeAgent("claude", { reply: replies.claude, rules: synthRules, log }),
    fakeAgent("codex", { reply: replies.codex, log }),
    fakeAgent("gemini", { reply: replies.gemini, log }),
  ];
}

/**
 * Claude Code's environment: a scratch HOME plus exactly what `connect claude` exports for the
 * gateway's own configuration (so the council's context window is declared as it would be).
 */
export async function claudeEnv(dir: string, port: number, token?: string) {
  const exports = parseExports(
    await connect(
      dir,
      ["claude", "--config", join(dir, "gateway.yaml"), "--port", String(port)],
      token ? { SVC_GATEWAY_TOKEN: token } : {},
    ),
  );
  assert.ok(exports.ANTHROPIC_BASE_URL, "connect claude prints ANTHROPIC_BASE_URL");
  const home = join(dir, "claude-home");
  await Deno.mkdir(home, { recursive: true });
  return isolatedEnv(home, { ...exports, CLAUDE_CODE_MAX_RETRIES: "0" });
}

export async function runClaude(
  cwd: string,
  env: Record<string, string>,
  ask: string,
  extra: string[] = [],
  cli = claude.path!,
) {
  const result = await run(cli, [
    "-p",
    ask,
    "--output-format",
    "stream-json",
    "--verbose",
    ...extra,
  ], { cwd, env });
  const events = jsonLines(result.stdout);
  const final = events.findLast((e) => e.type === "result") as
    | { result?: string; is_error?: boolean }
    | undefined;
  return { ...result, events, final };
}

export function turnStarts(lines: string[]): string[] {
  return lines.filter((line) => line.includes("turn start:"));
}

/** CODEX_HOME with `connect codex --toml` plus offline-harness settings; env from `--env`. */
export async function codexEnv(dir: string, port: number, token?: string) {
  const gatewayEnv: Record<string, string> = token ? { SVC_GATEWAY_TOKEN: token } : {};
  const toml = await connect(dir, ["codex", "--toml", "--port", String(port)], gatewayEnv);
  const exports = parseExports(
    await connect(dir, ["codex", "--env", "--port", String(port)], gatewayEnv),
  );
  const home = join(dir, "codex-home");
  const codexHome = join(home, ".codex");
  await Deno.mkdir(codexHome, { recursive: true });
  // Offline harness only: no update checks, analytics or plugin fetches (docs: clients.md §4).
  const harness = [
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    "check_for_update_on_startup = false",
  ].join("\n");
  const tables = [
    "[analytics]",
    "enabled = false",
    "[features]",
    "plugins = false",
    "apps = false",
    "remote_plugin = false",
    "tool_suggest = false",
  ].join("\n");
  // Top-level keys must precede every [table]: harness keys, then connect's block, then tables.
  await Deno.writeTextFile(join(codexHome, "config.toml"), `${harness}\n${toml}\n${tables}\n`);
  return isolatedEnv(home, { ...exports, CODEX_HOME: codexHome });
}

export async function runCodex(
  cwd: string,
  env: Record<string, string>,
  ask: string,
  extra: string[] = [],
  cli = codex.path!,
) {
  const result = await run(
    cli,
    ["exec", "--json", "--skip-git-repo-check", ...extra, ask],
    { cwd, env },
  );
  const events = jsonLines(result.stdout);
  const items = events.filter((e) => e.type === "item.completed").map((e) =>
    e.item as { type: string; text?: string }
  );
  return { ...result, events, items };
}
