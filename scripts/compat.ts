/**
 * Compatibility matrix: installs Claude Code, Codex and Gemini CLI at the versions asked for into
 * a cache directory, runs the real-host and real-child end-to-end tests against them, and prints
 * a table of scenario × CLI version. Exits non-zero when a scenario failed or a CLI could not be
 * installed.
 *
 * Usage (from the repository root):
 *   deno task compat                                  # the pinned versions (.ci/run's)
 *   deno task compat --latest                         # the newest of each on npm
 *   deno task compat --claude 2.1.332 --codex 0.171.0 --gemini 0.61.0
 *   [--dir ~/.cache/council-gateway-compat]
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { PINNED_VERSIONS } from "../tests/e2e/host_versions.ts";

export type Cli = "claude" | "codex" | "gemini";
export const CLIS: readonly Cli[] = ["claude", "codex", "gemini"];

export const PACKAGES: Record<Cli, string> = {
  claude: "@anthropic-ai/claude-code",
  codex: "@openai/codex",
  gemini: "@google/gemini-cli",
};

/** The test files that run the real CLIs, as hosts in front of the gateway and as its children. */
export const TEST_FILES = [
  "tests/e2e/hosts_test.ts",
  "tests/e2e/hosts_traffic_test.ts",
  "tests/e2e/hosts_codex_test.ts",
  "tests/e2e/hosts_compaction_test.ts",
  "tests/agents/cli/real_claude_test.ts",
  "tests/agents/cli/real_codex_test.ts",
  "tests/agents/cli/real_gemini_test.ts",
  "tests/agents/cli/real_readonly_test.ts",
];

/** What the matrix needs from the outside world (a fake in its test: no network). */
export interface CompatDeps {
  /** The newest published version of an npm package. */
  latest(pkg: string): Promise<string>;
  /** Installs `pkg@version` specs into `dir` (node_modules/.bin gets the CLIs). */
  install(dir: string, specs: string[]): Promise<void>;
  /** Runs the test files with `env` added; resolves to Deno's test report (stdout). */
  runTests(files: readonly string[], env: Record<string, string>): Promise<string>;
  print(line: string): void;
}

export type Outcome = "ok" | "FAILED" | "skipped";

/** One test's line of Deno's report: `name ... ok (2s)`, `... FAILED (1s)`, `... ignored (0ms)`. */
const REPORT_LINE = /^(.+?) \.\.\. (ok|FAILED|ignored)(?: \(|$)/;

/** The scenarios of a test report and how each ended (the last line of a name counts). */
export function parseReport(report: string): Map<string, Outcome> {
  const outcomes = new Map<string, Outcome>();
  // deno-lint-ignore no-control-regex
  for (const line of report.replace(/\x1b\[[0-9;]*m/g, "").split("\n")) {
    const match = line.trim().match(REPORT_LINE);
    if (!match) continue;
    outcomes.set(match[1], match[2] === "ignored" ? "skipped" : match[2] as Outcome);
  }
  return outcomes;
}

/** Which CLI a scenario runs, by the name its test gives it. */
export function cliOf(scenario: string): Cli | undefined {
  if (/^(?:real )?claude\b/i.test(scenario)) return "claude";
  if (/^(?:real )?codex\b/i.test(scenario)) return "codex";
  if (/^(?:real )?gemini\b/i.test(scenario)) return "gemini";
  return undefined;
}

/** The version a scenario's name pins (`claude code 2.1.197: …`), if it names one. */
export function pinnedVersionOf(scenario: string): string | undefined {
  return scenario.match(/^(?:real )?(?:claude(?: code)?|codex|gemini) (\d+\.\d+\.\d+)\b/i)?.[1];
}

/**
 * A Markdown table: one row per scenario, one column per CLI at its version. Scenarios of an
 * older pinned version (not installed here, so skipped) are left out.
 */
export function matrixTable(
  versions: Record<Cli, string>,
  outcomes: Map<string, Outcome>,
): string {
  const header = `| scenario | ${CLIS.map((cli) => `${cli} ${versions[cli]}`).join(" | ")} |`;
  const rule = `|---|${CLIS.map(() => "---").join("|")}|`;
  const here = [...outcomes].filter(([scenario]) => {
    const cli = cliOf(scenario);
    const pinned = pinnedVersionOf(scenario);
    return cli === undefined || pinned === undefined || pinned === versions[cli];
  });
  const rows = here.map(([scenario, outcome]) => {
    const cli = cliOf(scenario);
    const cells = CLIS.map((c) => (cli === undefined || c === cli ? outcome : ""));
    return `| ${scenario.replaceAll("|", "\\|")} | ${cells.join(" | ")} |`;
  });
  return [header, rule, ...rows].join("\n");
}

export interface CompatOptions {
  latest: boolean;
  versions: Partial<Record<Cli, string>>;
  dir: string;
}

/** The versions to try: named ones, else the newest on npm (`--latest`), else the pins. */
export async function resolveVersions(
  options: CompatOptions,
  deps: Pick<CompatDeps, "latest">,
): Promise<Record<Cli, string>> {
  const resolved = {} as Record<Cli, string>;
  for (const cli of CLIS) {
    resolved[cli] = options.versions[cli] ??
      (options.latest ? await deps.latest(PACKAGES[cli]) : PINNED_VERSIONS[cli]);
  }
  return resolved;
}

/** Installs, runs and prints the matrix; resolves to the exit code. */
export async function runCompat(options: CompatOptions, deps: CompatDeps): Promise<number> {
  const versions = await resolveVersions(options, deps);
  const dir = join(options.dir, CLIS.map((cli) => `${cli}-${versions[cli]}`).join("_"));
  deps.print(`compat: ${CLIS.map((cli) => `${cli} ${versions[cli]}`).join(", ")} in ${dir}`);
  try {
    await deps.install(dir, CLIS.map((cli) => `${PACKAGES[cli]}@${versions[cli]}`));
  } catch (err) {
    deps.print(`compat: install failed: ${(err as Error).message}`);
    return 1;
  }
  const report = await deps.runTests(TEST_FILES, {
    COUNCIL_TEST_CLI_DIR: dir,
    COUNCIL_TEST_CLAUDE_VERSION: versions.claude,
    COUNCIL_TEST_CODEX_VERSION: versions.codex,
    COUNCIL_TEST_GEMINI_VERSION: versions.gemini,
  });
  const outcomes = parseReport(report);
  deps.print(matrixTable(versions, outcomes));
  const failed = [...outcomes.values()].filter((o) => o === "FAILED").length;
  if (outcomes.size === 0) {
    deps.print("compat: no test report (the tests did not run)");
    return 1;
  }
  deps.print(`compat: ${outcomes.size} scenarios, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

async function command(cmd: string, args: string[], options: Deno.CommandOptions = {}) {
  const out = await new Deno.Command(cmd, { ...options, args, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** The real world: npm for versions and installs, `deno test` for the tests. */
export const npmDeps: CompatDeps = {
  async latest(pkg) {
    const out = await command("npm", ["view", pkg, "version"]);
    if (out.code !== 0) throw new Error(`npm view ${pkg} version: ${out.stderr.trim()}`);
    return out.stdout.trim();
  },
  async install(dir, specs) {
    await Deno.mkdir(dir, { recursive: true });
    const manifest = join(dir, "package.json");
    await Deno.writeTextFile(manifest, '{"private":true}\n', { createNew: true }).catch(() => {});
    const out = await command("npm", ["install", "--no-fund", "--no-audit", ...specs], {
      cwd: dir,
    });
    if (out.code !== 0) throw new Error(`npm install ${specs.join(" ")}: ${out.stderr.trim()}`);
    // npm may skip the script that puts Claude Code's native binary in place.
    const claude = join(dir, "node_modules/.bin/claude");
    if ((await command(claude, ["--version"]).catch(() => ({ code: 1 }))).code !== 0) {
      await command("node", ["node_modules/@anthropic-ai/claude-code/install.cjs"], { cwd: dir });
    }
  },
  async runTests(files, env) {
    const out = await command(Deno.execPath(), ["test", "-A", ...files], {
      env: { ...env, NO_COLOR: "1" },
    });
    return `${out.stdout}\n${out.stderr}`;
  },
  print: (line) => console.log(line),
};

export function parseCompatArgs(args: string[], home = Deno.env.get("HOME") ?? "."): CompatOptions {
  const { values } = parseArgs({
    args,
    options: {
      latest: { type: "boolean", default: false },
      claude: { type: "string" },
      codex: { type: "string" },
      gemini: { type: "string" },
      dir: { type: "string" },
    },
    strict: true,
  });
  const versions: Partial<Record<Cli, string>> = {};
  for (const cli of CLIS) {
    const version = values[cli];
    if (version === undefined) continue;
    if (!/^\d+\.\d+\.\d+(?:-[\w.]+)?$/.test(version)) {
      throw new Error(`--${cli}: not a version: ${version}`);
    }
    versions[cli] = version;
  }
  return {
    latest: values.latest,
    versions,
    dir: values.dir ?? join(home, ".cache", "council-gateway-compat"),
  };
}

if (import.meta.main) {
  let options: CompatOptions;
  try {
    options = parseCompatArgs(Deno.args);
  } catch (err) {
    console.error(`compat: ${(err as Error).message}`);
    Deno.exit(2);
  }
  Deno.exit(await runCompat(options, npmDeps));
}
