/**
 * The stub upstream (stub_upstream.ts) as a subprocess, and a council of one `anthropic` member on
 * it: the upstream of the scenarios that measure the gateway around an instant HTTP model.
 */
import { join } from "node:path";
import { serverProcess, spawnLogged, waitForLine } from "./processes.ts";
import type { BenchContext } from "./scenario.ts";
import type { Pace } from "./stub_upstream.ts";

/** The variable the member's key is read from (the stub accepts any key). */
export const KEY_VARIABLE = "COUNCIL_BENCH_STUB_KEY";

/** A council of one `anthropic` member on the stub upstream at `origin` (key: KEY_VARIABLE). */
export function stubCouncil(origin: string): Record<string, unknown> {
  return {
    fanOutPolicy: "never",
    defaultAgents: [{
      name: "api",
      runner: "anthropic",
      model: "claude-sonnet-4-5",
      baseUrl: origin,
      apiKeyEnv: KEY_VARIABLE,
    }],
  };
}

export async function startStub(context: BenchContext, name: string, pace: Pace) {
  const logPath = join(context.tempDir, `peer-stub-${name}.log`);
  const script = join(context.repoRoot, "scripts/bench/stub_upstream.ts");
  const child = spawnLogged(
    [
      Deno.execPath(),
      "run",
      "--allow-net",
      script,
      "--gap-ms",
      String(pace.gapMs),
      "--group",
      String(pace.group),
    ],
    logPath,
    context.repoRoot,
  );
  const match = await waitForLine(logPath, /listening on (http:\/\/[^\s]+)/, child, 60_000);
  return serverProcess(child, match[1], logPath);
}
