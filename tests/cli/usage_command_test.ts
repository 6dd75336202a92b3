/** `council-gateway usage`: the ledger summarised per day, session and agent; JSON; exit codes. */
import { tempDir } from "../support/git_repos.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliIo, HELP, runCli } from "../../src/cli/mod.ts";
import type { UsageSummary } from "../../src/cli/usage_command.ts";
import { appendEntry, type LedgerCall, type LedgerEntry } from "../../src/ledger/mod.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    env: (name) => ({ PATH: "", HOME: cwd, ...env })[name],
    cwd,
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  };
  return { code: await runCli(argv, io), stdout, stderr };
}

function call(agent: string, status: LedgerCall["status"], costUsd: number): LedgerCall {
  return {
    agent,
    label: agent,
    role: "child",
    model: "m",
    status,
    durationMs: 10,
    inputTokens: 100,
    outputTokens: 10,
    costUsd,
    estimated: false,
  };
}

function entry(
  time: string,
  session: string,
  calls: LedgerCall[],
  extra: Partial<LedgerEntry> = {},
): LedgerEntry {
  return {
    v: 1,
    time,
    turn: "t",
    session,
    sessionTurn: 1,
    sessionUsd: 0,
    counted: true,
    decision: calls.length > 1 ? "fanout" : "single",
    reason: "r",
    agents: calls.map((c) => c.label),
    calls,
    outcome: "answer",
    failed: false,
    cancelled: false,
    wallMs: 10,
    inputTokens: calls.reduce((n, c) => n + c.inputTokens, 0),
    outputTokens: calls.reduce((n, c) => n + c.outputTokens, 0),
    costUsd: calls.reduce((n, c) => n + c.costUsd, 0),
    ...extra,
  };
}

const S1 = "1111111111111111aaaa";
const S2 = "2222222222222222bbbb";

async function sampleLedger(dir: string): Promise<string> {
  const path = join(dir, "ledger.jsonl");
  appendEntry(
    path,
    entry("2026-03-01T10:00:00.000Z", S1, [call("claude", "ok", 0.5), call("codex", "ok", 0.25)]),
  );
  appendEntry(
    path,
    entry("2026-03-01T11:30:00.000Z", S1, [call("claude", "timed-out", 0.125)], {
      cancelled: true,
    }),
  );
  appendEntry(path, entry("2026-03-02T09:00:00.000Z", S2, [call("codex", "ok", 1)]));
  appendEntry(
    path,
    entry("2026-03-02T09:05:00.000Z", S2, [], { counted: false, decision: "capped" }),
  );
  await Deno.writeTextFile(path, "{torn\n", { append: true });
  return path;
}

Deno.test("usage: tables per day, session and agent, with a totals line", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  const path = await sampleLedger(dir);
  const run = await cli(["usage", "--ledger", "ledger.jsonl"], dir);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, "");
  const lines = run.stdout.split("\n");
  assert.equal(
    lines[0],
    `Ledger ${path}: 3 turns, 2 sessions, 4 agent calls, $1.8750 ` +
      "(1 capped, 1 cancelled, 1 invalid line(s) skipped)",
  );
  const row = (first: string) => lines.find((l) => l.startsWith(first))?.split(/\s{2,}/);
  assert.deepEqual(row("2026-03-01"), ["2026-03-01", "2", "3", "300", "30", "$0.8750"]);
  assert.deepEqual(row("2026-03-02"), ["2026-03-02", "1", "1", "100", "10", "$1.0000"]);
  assert.deepEqual(row("222222222222"), [
    "222222222222",
    "2026-03-02 09:00",
    "2026-03-02 09:05",
    "1",
    "100",
    "10",
    "$1.0000",
  ]);
  assert.deepEqual(row("111111111111")?.slice(-4), ["2", "300", "30", "$0.8750"]);
  assert.deepEqual(row("codex"), ["codex", "2", "0", "200", "20", "$1.2500"]);
  assert.deepEqual(row("claude"), ["claude", "2", "1", "200", "20", "$0.6250"]);
  for (const title of ["Per day", "Per session", "Per agent"]) assert.ok(lines.includes(title));
});

Deno.test("usage: --json gives the same summary as data; the ledger can come from --config", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  await sampleLedger(dir);
  await Deno.writeTextFile(join(dir, "gateway.yaml"), "ledger: ledger.jsonl\n");
  const run = await cli(["usage", "--config", "gateway.yaml", "--json"], dir);
  assert.equal(run.code, 0, run.stderr);
  const summary: UsageSummary = JSON.parse(run.stdout);
  assert.equal(summary.turns, 3);
  assert.equal(summary.usd, 1.875);
  assert.equal(summary.skipped, 1);
  assert.deepEqual(summary.days.map((d) => [d.day, d.turns, d.usd]), [
    ["2026-03-01", 2, 0.875],
    ["2026-03-02", 1, 1],
  ]);
  assert.deepEqual(summary.sessions.map((s) => [s.session, s.turns]), [[S2, 1], [S1, 2]]);
  assert.deepEqual(summary.agents.map((a) => [a.agent, a.calls, a.failed]), [
    ["codex", 2, 0],
    ["claude", 2, 1],
  ]);
});

Deno.test("usage: an empty ledger says so; --help; exit 2 without a ledger, exit 1 when unreadable", async () => {
  await using dirTemp = await tempDir("cg-test-");
  const dir = dirTemp.path;
  await Deno.writeTextFile(join(dir, "empty.jsonl"), "");
  const empty = await cli(["usage", "--ledger", "empty.jsonl"], dir);
  assert.equal(empty.code, 0);
  assert.match(empty.stdout, /0 turns, 0 sessions.*\nNo turns recorded yet\.\n$/);

  assert.deepEqual(await cli(["usage", "--help"], dir), {
    code: 0,
    stdout: HELP.usage,
    stderr: "",
  });
  assert.match(HELP.main, /usage +\[--ledger FILE\]/);

  const unset = await cli(["usage"], dir);
  assert.equal(unset.code, 2);
  assert.match(unset.stderr, /^usage: no ledger configured/);

  const missing = await cli(["usage", "--ledger", "nope.jsonl"], dir);
  assert.equal(missing.code, 1);
  assert.equal(
    missing.stderr,
    `council-gateway: usage: cannot read ledger ${join(dir, "nope.jsonl")}: file not found\n`,
  );

  const wrong = await cli(["usage", "--port", "1"], dir);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--host and --port do not apply/);
});
