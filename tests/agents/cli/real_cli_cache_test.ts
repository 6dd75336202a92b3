/**
 * CLI children and prompt caching (issue 24, point 3), with the REAL CLIs: each runs the
 * gateway's prompts for consecutive requests of one session against a stub that logs the
 * upstream requests and answers with cache reads by prefix as the real API would. Each turn's
 * upstream request must repeat the previous one's up to our task section, the (simulated) API
 * must read most of it from its cache, and the CLI must report those reads. Each CLI is
 * skipped, with a visible reason, when it is not installed (see real_claude_test.ts).
 */
import assert from "node:assert/strict";
import { findTestCli } from "../../support/agent_runner.ts";
import { type CliName, measureCli } from "./cli_cache_turns.ts";
import { claudeCodeSession } from "../../support/session_transcript.ts";

const CLIS: { name: CliName; version: RegExp; requests: number }[] = [
  { name: "claude", version: /Claude Code/, requests: 3 },
  { name: "codex", version: /codex-cli/, requests: 3 },
  // Gemini starts slowly: one comparison is enough.
  { name: "gemini", version: /^\d+\.\d+/, requests: 2 },
];

for (const cli of CLIS) {
  const found = findTestCli(cli.name, cli.version);
  if (!found.path) console.log(`real_cli_cache_test: ${cli.name} skipped: ${found.reason}`);
  Deno.test({
    name: `real ${cli.name}: consecutive turns repeat their prefix and read it from the cache`,
    ignore: !found.path,
    async fn() {
      const cwd = await Deno.makeTempDir({ prefix: "council-cli-cache-" });
      const bodies = claudeCodeSession({ requests: 14, finalChars: 100_000, cwd })
        .slice(10, 10 + cli.requests);
      const { turns, upstream } = await measureCli(cli.name, found.path!, bodies, cwd);
      try {
        for (const [i, turn] of turns.entries()) {
          assert.equal(turn.ok, true, `turn ${i + 1}: ${turn.error}`);
          assert.ok(turn.upstream, `turn ${i + 1} reached the stub`);
          assert.equal(turn.reportedCacheRead, turn.upstream.cache.read, "the CLI reports reads");
          if (i === 0) continue;
          const previous = turns[i - 1].upstream!;
          // Everything the previous turn sent up to our task section comes again, byte for byte.
          const task = previous.promptChars - turn.upstream.repeatedChars;
          assert.ok(task > 0 && task < 1500, `turn ${i + 1} diverges ${task} chars from the end`);
          const read = turn.upstream.cache.read / turn.upstream.cache.total;
          assert.ok(read >= 0.8, `turn ${i + 1}: ${Math.round(read * 100)} % read from the cache`);
        }
      } finally {
        await upstream[Symbol.asyncDispose]();
        await Deno.remove(cwd, { recursive: true });
      }
    },
  });
}
