/**
 * The ledger wired into the real server: every finished turn appended, and a restarted server
 * keeps each session's turn count (so its cap) and spend.
 */
import { tempDir } from "../support/git_repos.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Config, ConfigFile } from "../../src/config/mod.ts";
import { configOf } from "../support/test_config.ts";
import { type LedgerEntry, LedgerError, readLedger } from "../../src/ledger/mod.ts";
import { startServer } from "../../src/server/wiring.ts";
import { fakeAgents } from "../support/scripted_agents.ts";
import { spawnGateway } from "../support/gateway_process.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { eventually } from "../support/wait.ts";

function configWith(file: ConfigFile): Config {
  return configOf({
    port: 0,
    fanOutPolicy: "never",
    defaultAgents: [{ runner: "claude", model: "opus" }],
    ...file,
  });
}

async function ask(origin: string, text: string): Promise<string> {
  const response = await fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-opus-4-8",
      max_tokens: 100,
      system: "the same system prompt",
      messages: [{ role: "user", content: text }],
    }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.content[0].text;
}

async function callRecorded(path: string): Promise<boolean> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.includes('"kind":"call"');
}

function ledgerLines(path: string): LedgerEntry[] {
  const lines: LedgerEntry[] = [];
  readLedger(path, (entry) => lines.push(entry));
  return lines;
}

Deno.test("ledger + server: a restart keeps the session's turn count, so its cap, and spend", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const ledger = join(dir, "turns.jsonl");
  const config = configWith({ ledger, maxTurns: 2 });
  const runs = fakeAgents(() => ({ text: "answered", usage: { costUsd: 0.5 } }));

  const first = startServer(config, { runAgent: runs.runAgent, graceMs: 0 });
  assert.equal(await ask(first.origin, "first ask of the session"), "answered");
  await first.shutdown();
  assert.equal(ledgerLines(ledger).length, 1);

  const second = startServer(config, { runAgent: runs.runAgent, graceMs: 0 });
  assert.equal(await ask(second.origin, "first ask of the session"), "answered");
  assert.match(await ask(second.origin, "first ask of the session"), /maxTurns/);
  await second.shutdown();

  assert.equal(runs.calls.length, 2, "the capped turn ran no agent");
  const lines = ledgerLines(ledger);
  assert.deepEqual(
    lines.map((l) => [l.sessionTurn, l.counted, l.decision, l.costUsd]),
    [[1, true, "single", 0.5], [2, true, "single", 0.5], [2, false, "capped", 0]],
  );
  assert.equal(new Set(lines.map((l) => l.session)).size, 1);
  assert.match(lines[0].session, /^[0-9a-f]{64}$/);
});

Deno.test("ledger + server: a ledger that cannot be created stops start-up with a clear error", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const ledger = join(dir, "no-such-dir", "turns.jsonl");
  assert.throws(
    () => startServer(configWith({ ledger }), { runAgent: fakeAgents(() => ({})).runAgent }),
    (err: Error) =>
      err instanceof LedgerError &&
      err.message === `ledger ${ledger}: its directory does not exist`,
  );
});

Deno.test("ledger + server: kill -9 mid-turn, and the next start settles the calls that had finished", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cg-crash-" });
  try {
    const ledger = join(dir, "turns.jsonl");
    const config = {
      ledger,
      fanOutPolicy: "always",
      defaultAgents: [
        fakeAgent("claude", { costUsd: 0.1 }),
        // Still working when the gateway dies; it exits on its own soon after.
        fakeAgent("codex", { delayMs: 3_000, log: join(dir, "codex.log") }),
      ],
    };
    const first = await spawnGateway(dir, config);
    const turn = fetch(`${first.origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-opus-4-8",
        max_tokens: 10,
        messages: [{ role: "user", content: "a question worth a council" }],
      }),
    }).then((r) => r.text(), () => "");
    // Killed once claude's call is on disk, while codex still works.
    await eventually(() => callRecorded(ledger), "claude's call in the ledger");
    first.kill("SIGKILL");
    await first.exited;
    await turn;
    assert.deepEqual(ledgerLines(ledger), [], "no turn ended");

    const second = await spawnGateway(dir, config);
    // Logged at start, before the gateway listens.
    const settled = second.lines().find((l) => /settled 1 turn\(s\) cut short/.test(l));
    assert.match(settled ?? second.lines().join("\n"), /\$0\.1000/);
    await (await fetch(`${second.origin}/v1/models`)).body?.cancel();
    assert.equal(await second.stop(), 0, second.lines().join("\n"));
    const [entry] = ledgerLines(ledger);
    assert.equal(entry.decision, "interrupted");
    assert.equal(entry.costUsd, 0.1);
    assert.deepEqual(entry.calls.map((c) => [c.agent, c.status]), [["fake-claude", "ok"]]);
  } finally {
    // The child the killed gateway left running (until the gateway reaps its process groups).
    for (const child of await readFakeLog(join(dir, "codex.log")).catch(() => [])) {
      try {
        Deno.kill(child.pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
