/**
 * CLI children and prompt caching: each installed real CLI (claude, codex, gemini from
 * ~/.cache/council-gateway-test or PATH) runs the gateway's prompts for consecutive requests of
 * the session benchmark's conversation against the caching stub. Reported per CLI, over turns
 * after the first: the share of each upstream request repeating the previous one from its
 * start, the share the real API would read from its cache, and the share the CLI itself reports
 * as cache reads. Opt-in (`--only clicache`): it needs the CLIs installed.
 */
import { join } from "node:path";
import { type CliName, type CliTurn, measureCli } from "../cli_cache.ts";
import type { Figure } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";
import { claudeCodeSession } from "../session_transcript.ts";

const CLIS: CliName[] = ["claude", "codex", "gemini"];

/** The CLI's executable, or undefined when it is not installed. */
async function cliPath(name: CliName): Promise<string | undefined> {
  const root = Deno.env.get("COUNCIL_TEST_CLI_DIR") ??
    join(Deno.env.get("HOME") ?? ".", ".cache", "council-gateway-test");
  const candidate = join(root, "node_modules", ".bin", name);
  if (await Deno.stat(candidate).then(() => true, () => false)) return candidate;
  const found = await new Deno.Command("sh", {
    args: ["-c", 'command -v "$1"', "sh", name],
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => undefined);
  const path = found?.success ? new TextDecoder().decode(found.stdout).trim() : "";
  return path || undefined;
}

function shares(turns: readonly CliTurn[]) {
  const later = turns.slice(1).filter((t) => t.upstream);
  const total = later.reduce((n, t) => n + t.upstream!.cache.total, 0) || 1;
  const chars = later.reduce((n, t) => n + t.upstream!.promptChars, 0) || 1;
  return {
    repeated: later.reduce((n, t) => n + t.upstream!.repeatedChars, 0) / chars,
    read: later.reduce((n, t) => n + t.upstream!.cache.read, 0) / total,
    reported: later.reduce((n, t) => n + (t.reportedCacheRead ?? 0), 0) / total,
    failed: turns.filter((t) => !t.ok).length,
  };
}

export const clicache: Scenario = {
  name: "clicache",
  description: "real claude, codex, gemini children on consecutive turns against a caching " +
    "stub: repeated prefix, cache reads (installed CLIs)",
  async run(context) {
    const count = runs(context, 6, 3);
    const cwd = join(context.tempDir, "clicache-project");
    await Deno.mkdir(cwd, { recursive: true });
    const bodies = claudeCodeSession({ requests: 60, finalChars: 400_000, cwd }).slice(
      20,
      20 + count,
    );
    const figures: Figure[] = [];
    const details: Record<string, unknown> = {};
    for (const name of CLIS) {
      const path = await cliPath(name);
      if (!path) {
        context.log(`clicache: ${name} not installed, skipped`);
        continue;
      }
      context.log(`clicache: ${name} (${path}), ${count} turns`);
      const { turns, upstream } = await measureCli(name, path, bodies, cwd);
      await upstream[Symbol.asyncDispose]();
      const s = shares(turns);
      details[name] = { turns, shares: s };
      const note = s.failed ? `${s.failed} failed turns: ${turns.find((t) => !t.ok)?.error}` : "";
      const f = (label: string, value: number): Figure => ({
        scenario: "clicache",
        name: `${name}: ${label}, turns 2+`,
        unit: "%",
        gateway: value * 100,
        ...(note ? { note } : {}),
      });
      figures.push(
        f("upstream request repeating the previous one", s.repeated),
        f("input the API would read from its cache", s.read),
        f("cache reads the CLI reports", s.reported),
      );
    }
    return { figures, details };
  },
};
