/**
 * Compaction with the real hosts through the real gateway (fake children, a council of three
 * that fans out on every real turn): Claude Code's `/compact` and auto-compact and Codex's
 * auto-compaction (`model_auto_compact_token_limit`) each run one child, agent 0, and the host
 * goes on from the summary that child wrote.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type FakeLogEntry, readFakeLog } from "../fixtures/fakes.ts";
import { spawnGateway } from "../support/gateway_process.ts";
import { tempDir } from "../support/git_repos.ts";
import {
  claude,
  claudeEnv,
  codexEnv,
  CODEXES,
  fakeCouncil,
  HOST_VERSIONS,
  runClaude,
  runCodex,
} from "./hosts.ts";

/**
 * What only a compaction's prompt holds: for Claude Code the council's answer-turn task (its
 * real turns declare tools, so they are action turns); for Codex, whose turns are all answer
 * turns, the marker phrase its compaction ask opens with.
 */
const COMPACTION_MARK = {
  claude: "Write the assistant's next reply",
  codex: "CONTEXT CHECKPOINT COMPACTION",
};
type Host = keyof typeof COMPACTION_MARK;

/** The summary agent 0 writes; a later turn that carries it went on from the compaction. */
const SUMMARY = "<analysis>short</analysis>\n<summary>KIWI-42: the user greeted the " +
  "assistant; nothing is pending.</summary>";
const AFTER = "Going on from KIWI-42.";
/** Claude Code's turns are action turns (JSON replies); Codex's are answer turns (text). */
const REPLY: Record<Host, { hello: string; after: string }> = {
  claude: {
    hello: JSON.stringify({ kind: "answer", text: "Hello back." }),
    after: JSON.stringify({ kind: "answer", text: AFTER }),
  },
  codex: { hello: "Hello back.", after: AFTER },
};

/** The council: agent 0 (fake claude) writes the summary; any child seeing it answers AFTER. */
async function council(dir: string, host: Host) {
  const log = join(dir, "fakes.log");
  const { hello, after } = REPLY[host];
  const rules = [
    { match: "KIWI-42", reply: after },
    { match: COMPACTION_MARK[host], reply: SUMMARY },
  ];
  const agents = fakeCouncil(log, { claude: hello, codex: hello, gemini: hello }, rules);
  for (const agent of agents.slice(1)) {
    agent.env.FAKE_RULES = JSON.stringify([{ match: "KIWI-42", reply: after }]);
  }
  const gateway = await spawnGateway(dir, { fanOutPolicy: "always", defaultAgents: agents });
  const project = join(dir, "project");
  await Deno.mkdir(project);
  return { log, gateway, project };
}

function assertOneChildPerCompaction(host: Host, lines: string[], calls: FakeLogEntry[]) {
  const plans = lines.filter((l) => /consulting one agent: fake-claude — compaction \(/.test(l));
  assert.equal(plans.length, 1, `compaction plans:\n${lines.join("\n")}`);
  const summaries = calls.filter((call) => call.prompt.includes(COMPACTION_MARK[host]));
  assert.equal(summaries.length, 1, "one child for the compaction");
  assert.ok(summaries.every((call) => call.cli === "claude"), "agent 0 wrote it");
}

Deno.test({
  name: `claude code ${HOST_VERSIONS.claude}: /compact runs one child and the next turn goes on ` +
    "from its summary",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-compact-");
    const dir = scratch.path;
    const { log, gateway, project } = await council(dir, "claude");
    try {
      const env = await claudeEnv(dir, gateway.port);
      const first = await runClaude(project, env, "Hello there");
      assert.equal(first.code, 0, `claude failed:\n${first.stdout}\n${first.stderr}`);
      const compact = await runClaude(project, env, "/compact", ["--continue"]);
      assert.equal(compact.code, 0, `/compact failed:\n${compact.stdout}\n${compact.stderr}`);
      assertOneChildPerCompaction("claude", gateway.lines(), await readFakeLog(log));
      const next = await runClaude(project, env, "What should we do next?", ["--continue"]);
      assert.equal(next.code, 0, `claude failed:\n${next.stdout}\n${next.stderr}`);
      assert.equal(next.final?.result, AFTER);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

Deno.test({
  name: `claude code ${HOST_VERSIONS.claude}: auto-compact at the declared window runs one ` +
    "child and the turn goes on from its summary",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-autocompact-");
    const dir = scratch.path;
    const { log, gateway, project } = await council(dir, "claude");
    try {
      const env = await claudeEnv(dir, gateway.port);
      assert.ok(Number(env.CLAUDE_CODE_MAX_CONTEXT_TOKENS) > 0, "connect declares the window");
      // The council's id (a model Claude Code does not know, so the declared window is its
      // window), and a window whose compaction point the first turn (Claude Code's own
      // instructions and tools) passes.
      const small = { ...env, CLAUDE_CODE_MAX_CONTEXT_TOKENS: "30000" };
      const council = ["--model", "claude-council"];
      const first = await runClaude(project, small, "Hello there", council);
      assert.equal(first.code, 0, `claude failed:\n${first.stdout}\n${first.stderr}`);
      const next = await runClaude(project, small, "What should we do next?", [
        "--continue",
        ...council,
      ]);
      assert.equal(next.code, 0, `claude failed:\n${next.stdout}\n${next.stderr}`);
      assertOneChildPerCompaction("claude", gateway.lines(), await readFakeLog(log));
      assert.equal(next.final?.result, AFTER);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

for (const [version, cli] of CODEXES) {
  Deno.test({
    name: `codex ${version}: auto-compaction runs one child and the resumed turn goes on from ` +
      "its summary",
    ignore: !cli.path,
    async fn() {
      await using scratch = await tempDir("e2e-codex-compact-");
      const dir = scratch.path;
      const { log, gateway, project } = await council(dir, "codex");
      try {
        const env = await codexEnv(dir, gateway.port);
        const config = join(env.CODEX_HOME, "config.toml");
        // A limit the first turn's usage passes: the next turn compacts before it starts.
        const toml = await Deno.readTextFile(config);
        await Deno.writeTextFile(config, `model_auto_compact_token_limit = 1000\n${toml}`);
        const first = await runCodex(project, env, "Hello there", [], cli.path!);
        assert.equal(first.code, 0, `codex failed:\n${first.stdout}\n${first.stderr}`);
        const next = await runCodex(
          project,
          env,
          "What should we do next?",
          ["resume", "--last"],
          cli.path!,
        );
        assert.equal(next.code, 0, `codex failed:\n${next.stdout}\n${next.stderr}`);
        assertOneChildPerCompaction("codex", gateway.lines(), await readFakeLog(log));
        const messages = next.items.filter((i) => i.type === "agent_message").map((i) => i.text);
        assert.deepEqual(messages, [AFTER]);
      } finally {
        assert.equal(await gateway.stop(), 0);
      }
    },
  });
}
