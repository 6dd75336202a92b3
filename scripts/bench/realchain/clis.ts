/**
 * The real CLIs the real-chain bench drives: where they are installed (as the tests and CI
 * install them), a HOME for them that points each at the stub upstream, and the gateway agent
 * entries that run each one through the stamping wrapper.
 */
import { join } from "node:path";
import type { Vendor } from "./upstream.ts";

export const VENDORS: readonly Vendor[] = ["claude", "codex", "gemini"];

/** The models each CLI is asked for (gemini pinned: its `auto` model adds a router call). */
export const MODELS: Readonly<Record<Vendor, string>> = {
  claude: "opus",
  codex: "gpt-5.5",
  gemini: "gemini-2.5-flash",
};

/** The variable that carries the stub's "API key" to every CLI (any value works). */
const KEY = "realchain-key";

/** Where .ci/run installs the CLIs: `$COUNCIL_TEST_CLI_DIR`, else ~/.cache/council-gateway-test. */
export function cliDir(env: (name: string) => string | undefined = Deno.env.get): string {
  return env("COUNCIL_TEST_CLI_DIR") ??
    join(env("HOME") ?? ".", ".cache", "council-gateway-test");
}

export interface InstalledCli {
  vendor: Vendor;
  path: string;
  /** `--version`'s first line. */
  version: string;
}

/** Each CLI's path and version, or why it cannot be run. */
export async function findClis(dir = cliDir()): Promise<{
  found: InstalledCli[];
  missing: string[];
}> {
  const found: InstalledCli[] = [];
  const missing: string[] = [];
  for (const vendor of VENDORS) {
    const path = join(dir, "node_modules", ".bin", vendor);
    try {
      const out = await new Deno.Command(path, {
        args: ["--version"],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const version = new TextDecoder().decode(out.stdout).trim().split("\n")[0];
      if (!out.success || !version) throw new Error(`--version exited ${out.code}`);
      found.push({ vendor, path, version });
    } catch (err) {
      missing.push(`${vendor} (${path}): ${(err as Error).message}`);
    }
  }
  return { found, missing };
}

/**
 * A HOME for the CLIs: gemini needs its auth type chosen in settings (an env base URL alone is
 * refused in headless mode); codex and claude need only an empty one.
 */
export async function prepareHome(home: string): Promise<void> {
  await Deno.mkdir(join(home, ".gemini"), { recursive: true });
  await Deno.mkdir(join(home, ".codex"), { recursive: true });
  await Deno.writeTextFile(
    join(home, ".gemini", "settings.json"),
    JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2),
  );
}

/** What a CLI needs to talk to the stub and nothing more (start-up switches are the adapters'). */
export function pointingEnv(vendor: Vendor, stubOrigin: string, home: string) {
  const common = { HOME: home };
  switch (vendor) {
    case "claude":
      return { ...common, ANTHROPIC_BASE_URL: stubOrigin, ANTHROPIC_API_KEY: KEY };
    case "codex":
      return { ...common, CODEX_HOME: join(home, ".codex"), REALCHAIN_API_KEY: KEY };
    case "gemini":
      return { ...common, GOOGLE_GEMINI_BASE_URL: stubOrigin, GEMINI_API_KEY: KEY };
  }
}

/** Extra CLI arguments that point a CLI at the stub (codex takes its provider as config). */
export function pointingArgs(vendor: Vendor, stubOrigin: string): string[] {
  if (vendor !== "codex") return [];
  const provider = `model_providers.realchain={name="Realchain stub",base_url="${stubOrigin}/v1",` +
    `wire_api="responses",env_key="REALCHAIN_API_KEY",` +
    `env_http_headers={"x-realchain-pid"="REALCHAIN_PID"}}`;
  return ["-c", "model_provider=realchain", "-c", provider];
}

export interface ChainOptions {
  stubOrigin: string;
  home: string;
  /** The stamping wrapper (stamp.sh) and the file it appends to. */
  wrapper: string;
  stampsPath: string;
  /** Per agent: the time-out the gateway gives it. */
  timeoutMs: number;
}

/** A gateway agent entry that runs `cli` through the wrapper. */
export function chainAgent(cli: InstalledCli, options: ChainOptions): Record<string, unknown> {
  return {
    name: cli.vendor,
    runner: cli.vendor,
    model: MODELS[cli.vendor],
    command: options.wrapper,
    args: pointingArgs(cli.vendor, options.stubOrigin),
    env: {
      ...pointingEnv(cli.vendor, options.stubOrigin, options.home),
      REALCHAIN_EXEC: cli.path,
      REALCHAIN_TAG: cli.vendor,
      REALCHAIN_STAMPS: options.stampsPath,
    },
    timeoutMs: options.timeoutMs,
  };
}
