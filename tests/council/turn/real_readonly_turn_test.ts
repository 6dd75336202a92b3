/**
 * An action turn with the REAL claude, codex and gemini CLIs as children (each pointed at a
 * local model stub that tells it to write files with its own tool and a shell redirect, then
 * to read a file): under the default `childAccess: read-only` nothing is written. Skipped, with
 * a visible reason, when the claude or codex CLI is not installed.
 */
import assert from "node:assert/strict";
import { createCouncil } from "../../../src/council/turn/turn.ts";
import type { AgentConfig } from "../../../src/config/mod.ts";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";
import { startStub } from "../../support/model_api_stub.ts";
import {
  claudeAgent,
  codexAgent,
  geminiAgent,
  prepareHome,
} from "../../support/real_cli_agents.ts";
import {
  anthropicWriter,
  geminiWriter,
  modelSawReadable,
  responsesWriter,
  writeAttempt,
} from "../../support/write_attempt_stubs.ts";
import { collect, READ_TOOL, testConfig, testRequest } from "../../support/scripted_agents.ts";

const claude = findTestCli("claude", /Claude Code/);
const codex = findTestCli("codex", /codex-cli/);
const gemini = findTestCli("gemini", /\d+\.\d+/);
const missing = [claude, codex].find((cli) => !cli.path);
if (missing) console.log(`real_readonly_turn_test: skipped: ${missing.reason}`);

const PROPOSAL = JSON.stringify({ kind: "answer", text: "Nothing needs changing." });

Deno.test({
  name: "real CLIs: a fanned-out action turn with read-only children writes nothing",
  ignore: Boolean(missing),
  async fn() {
    await using home = await tempDir("council-ro-turn-home-");
    await using work = await tempDir("council-ro-turn-work-");
    await prepareHome(home.path);
    const attempt = writeAttempt(work.path);
    await Deno.writeTextFile(attempt.readable, `${attempt.readableText}\n`);
    await using claudeStub = startStub(anthropicWriter(attempt, PROPOSAL));
    await using codexStub = startStub(responsesWriter(attempt, PROPOSAL));
    await using geminiStub = startStub(geminiWriter(attempt, PROPOSAL));
    const agents: AgentConfig[] = [
      claudeAgent(claude.path!, claudeStub, home.path),
      codexAgent(codex.path!, codexStub, home.path),
      ...(gemini.path ? [geminiAgent(gemini.path, geminiStub, home.path)] : []),
    ];
    const { runTurn } = createCouncil({
      // Every child is awaited: each must try its writes (a majority would end the wait).
      config: testConfig({
        defaultAgents: agents,
        fanOutPolicy: "always",
        quorum: { minAnswers: 0 },
      }),
      runAgent: testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 }),
    });
    const log = await collect(
      runTurn(testRequest({ tools: [READ_TOOL], cwd: work.path }), new AbortController().signal),
    );

    assert.deepEqual(log.outcome, { kind: "answer", text: "Nothing needs changing." });
    assert.ok(log.progress.some((l) => l.startsWith(`unanimous (${agents.length} agents)`)));
    assert.deepEqual([...Deno.readDirSync(work.path)].map((e) => e.name), ["notes.txt"]);
    for (const stub of [claudeStub, codexStub, ...(gemini.path ? [geminiStub] : [])]) {
      assert.ok(stub.requests.length >= 4, "every write was attempted");
      assert.ok(modelSawReadable(stub.requests.map((r) => r.body), attempt), "reading works");
    }
  },
});
