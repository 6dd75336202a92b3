/**
 * Read-only access with the REAL claude, codex and gemini CLIs: a local model stub tells each
 * to write a file (its own write tool, then a shell redirect) and to read one. Nothing may be
 * written, and the read file's content must reach the model. Each test is skipped, with a
 * visible reason, when its CLI is not installed (see real_claude_test.ts for where they live).
 */
import assert from "node:assert/strict";
import { cleanBaseEnv, findTestCli, tempDir, testRunner } from "../../support/agent_runner.ts";
import { startStub, type StubHandler } from "../../support/model_api_stub.ts";
import {
  type AgentFor,
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
  type WriteAttempt,
  writeAttempt,
} from "../../support/write_attempt_stubs.ts";

const claude = findTestCli("claude", /Claude Code/);
const claudeOld = findTestCli("claude", /Claude Code/, "claude-2.1.197");
const codex = findTestCli("codex", /codex-cli/);
const gemini = findTestCli("gemini", /\d+\.\d+/);
for (const [name, cli] of Object.entries({ claude, claudeOld, codex, gemini })) {
  if (!cli.path) console.log(`real_readonly_test: ${name} skipped: ${cli.reason}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

async function runReadOnly(
  command: string,
  agentFor: AgentFor,
  handlerFor: (attempt: WriteAttempt) => StubHandler,
): Promise<void> {
  await using home = await tempDir("council-ro-home-");
  await using work = await tempDir("council-ro-work-");
  await prepareHome(home.path);
  const attempt = writeAttempt(work.path);
  await Deno.writeTextFile(attempt.readable, `${attempt.readableText}\n`);
  await using stub = startStub(handlerFor(attempt));
  const result = await testRunner({ baseEnv: cleanBaseEnv(), killGraceMs: 1000 })(
    agentFor(command, stub, home.path),
    "Write the two files, then read the notes.",
    { role: "child", cwd: work.path, access: "read-only" },
  );
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text.trim(), "Finished trying.");
  assert.ok(stub.requests.length >= 4, `every scripted step ran (${stub.requests.length})`);
  for (const file of attempt.written) assert.equal(await exists(file), false, `${file} written`);
  assert.ok(modelSawReadable(stub.requests.map((r) => r.body), attempt), "reading still works");
  assert.deepEqual([...Deno.readDirSync(work.path)].map((e) => e.name), ["notes.txt"]);
}

Deno.test({
  name: "real claude, read-only: its Write tool and a shell redirect write nothing; Read works",
  ignore: !claude.path,
  fn: () => runReadOnly(claude.path!, claudeAgent, anthropicWriter),
});

Deno.test({
  name: "real claude 2.1.197, read-only: nothing written, Read works",
  ignore: !claudeOld.path,
  fn: () => runReadOnly(claudeOld.path!, claudeAgent, anthropicWriter),
});

Deno.test({
  name: "real codex, read-only: apply_patch and a shell redirect write nothing; cat works",
  ignore: !codex.path,
  fn: () => runReadOnly(codex.path!, codexAgent, responsesWriter),
});

Deno.test({
  name: "real gemini, read-only: write_file and run_shell_command write nothing; read works",
  ignore: !gemini.path,
  fn: () => runReadOnly(gemini.path!, geminiAgent, geminiWriter),
});
