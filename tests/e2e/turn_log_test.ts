/**
 * CONTRACT.md §1.2 / §1.1.11 through the real process: every turn logs, under its `[turn <id>]`
 * prefix, the closing council recap and the session's cumulative spend (`sessionUsd`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fakeAgent } from "../fixtures/fakes.ts";
import { tempDir } from "../support/git_repos.ts";
import { spawnGateway } from "../support/gateway_process.ts";

async function oneTurn(json: boolean) {
  await using scratch = await tempDir("e2e-turn-log-");
  const dir = scratch.path;
  const synth = { match: "=== Candidate A ===", reply: "final" };
  const gateway = await spawnGateway(dir, {
    fanOutPolicy: "always",
    // Every child spawns in its turn (a warm pool's children start between turns, under none).
    warmPool: "off",
    logLevel: "debug",
    logJson: json,
    defaultAgents: [
      fakeAgent("claude", { reply: "draft one", rules: [synth], costUsd: 0.01 }),
      fakeAgent("codex", { reply: "draft two", log: join(dir, "fakes.log") }),
    ],
  });
  try {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gateway.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude-opus-4-8",
          max_tokens: 100,
          messages: [{ role: "user", content: "same session" }],
        }),
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    await gateway.waitForLine(/turn done[\s\S]*/);
    return gateway.lines();
  } finally {
    assert.equal(await gateway.stop(), 0);
  }
}

Deno.test("turn log (text): [turn] prefix on the recap and on the cumulative sessionUsd", async () => {
  const lines = await oneTurn(false);
  const recaps = lines.filter((l) =>
    / INFO +\[turn \w+\] council: 2 agents \(fake-claude, fake-codex\)/.test(l)
  );
  assert.equal(recaps.length, 2, lines.join("\n"));
  for (const recap of recaps) assert.match(recap, / · 3 calls · \$\d+\.\d{4}/);
  const spend = lines.filter((l) => / INFO +\[turn \w+\] session turns=\d+ sessionUsd=/.test(l))
    .map((l) => Number(/sessionUsd=([\d.]+)/.exec(l)![1]));
  assert.equal(spend.length, 2, lines.join("\n"));
  assert.ok(spend[0] >= 0.02, `two claude calls at $0.01 each: ${spend[0]}`);
  assert.ok(spend[1] > spend[0], `sessionUsd is cumulative: ${spend.join(" → ")}`);
  // The agents layer's records carry the turn id too.
  assert.ok(lines.some((l) => / DEBUG +\[turn \w+\] fake-claude: spawning /.test(l)), "spawn line");
  assert.ok(!lines.some((l) => /fake-claude: spawning /.test(l) && !l.includes("[turn ")));
});

Deno.test("turn log (JSON): the same records as JSON lines carrying the turn id", async () => {
  const lines = await oneTurn(true);
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const recap = records.filter((r) => /^council: 2 agents/.test(String(r.msg)));
  assert.equal(recap.length, 2);
  assert.ok(recap.every((r) => typeof r.turn === "string" && r.level === "info"));
  const spend = records.filter((r) => /sessionUsd=/.test(String(r.msg)));
  assert.equal(spend.length, 2);
  assert.ok(spend.every((r) => typeof r.turn === "string"));
});
