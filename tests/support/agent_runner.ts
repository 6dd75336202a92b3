/** Shared helpers of the agents tests: a runner with a clean base env, pid checks, events. */
import { type AgentRunnerOptions, createAgentRunner } from "../../src/agents/run.ts";
import type { AgentEvent, AgentRunner } from "../../src/agents/types.ts";
import { findOnPath } from "../../src/base/executables.ts";

/** Only what a child needs to start (node via PATH); nothing from the tester's shell. */
export function cleanBaseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...extra };
}

export function testRunner(options: Partial<AgentRunnerOptions> = {}): AgentRunner {
  return createAgentRunner({
    passApiKeys: false,
    selfOrigins: () => [],
    pricing: {},
    baseEnv: cleanBaseEnv(),
    killGraceMs: 300,
    ...options,
  });
}

/** True when the process no longer runs (gone, or a zombie nobody has reaped yet). */
export function isGone(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    return true;
  }
  // Through ps: Deno lets a test read /proc only with --allow-all.
  const ps = new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).outputSync();
  const stat = new TextDecoder().decode(ps.stdout).trim();
  return stat === "" || stat.startsWith("Z");
}

/** Collects a run's events; `text` joins the streamed text. */
export class EventLog {
  events: AgentEvent[] = [];
  readonly onEvent = (event: AgentEvent) => {
    this.events.push(event);
  };
  get text(): string {
    return this.events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  }
  get pid(): number | undefined {
    const started = this.events.find((e) => e.type === "started");
    return started?.type === "started" ? started.pid : undefined;
  }
  ofType<T extends AgentEvent["type"]>(type: T): Extract<AgentEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
  }
}

export async function readPids(path: string): Promise<number[]> {
  const text = await Deno.readTextFile(path);
  return text.split("\n").filter(Boolean).map(Number);
}

/** A temp directory removed when the `await using` scope ends. */
export async function tempDir(
  prefix = "council-test-",
): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/**
 * A real agent CLI for the real-CLI tests: `$COUNCIL_TEST_CLI_DIR/node_modules/.bin/<name>`
 * (default ~/.cache/council-gateway-test), else PATH; it must answer `--version`.
 */
export function findTestCli(
  name: string,
  version: RegExp,
  subdir?: string,
): { path?: string; reason?: string } {
  const root = Deno.env.get("COUNCIL_TEST_CLI_DIR") ??
    `${Deno.env.get("HOME") ?? ""}/.cache/council-gateway-test`;
  const dir = subdir ? `${root}/${subdir}` : root;
  // An older pinned version lives only in its subdirectory; PATH is a fallback for the newest.
  const onPath = subdir ? undefined : findOnPath(name, Deno.env.get);
  for (const path of [`${dir}/node_modules/.bin/${name}`, onPath]) {
    if (!path) continue;
    try {
      const out = new Deno.Command(path, { args: ["--version"], stdout: "piped", stderr: "piped" })
        .outputSync();
      if (out.success && version.test(new TextDecoder().decode(out.stdout))) return { path };
    } catch { /* not runnable */ }
  }
  return { reason: `${name} CLI not installed (looked in ${dir}/node_modules/.bin and PATH)` };
}
