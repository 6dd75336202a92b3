/**
 * The real hosts through the real gateway: Claude Code (`claude -p`) and Codex (`codex exec`)
 * pointed at a gateway subprocess whose children are the project's fake CLIs. Each host is
 * configured exactly as `council-gateway connect claude|codex` prints.
 *
 * The host CLIs are installed by `.ci/run` (pinned, into $COUNCIL_TEST_CLI_DIR, default
 * ~/.cache/council-gateway-test). Without them these tests are skipped with a loud reason.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { connect, parseExports, spawnGateway } from "../support/gateway_process.ts";
import { tempDir } from "../support/git_repos.ts";
import {
  claude,
  CLAUDE_CODES,
  claudeEnv,
  codex,
  codexEnv,
  CODEXES,
  fakeCouncil,
  runClaude,
  runCodex,
  TOKEN,
  turnStarts,
} from "./hosts.ts";

Deno.test({
  name: "claude code: a plain question gets the council's synthesized answer",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-answer-");
    const dir = scratch.path;
    const log = join(dir, "fakes.log");
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      streamProgress: true,
      defaultAgents: fakeCouncil(log, {
        claude: '{"kind":"answer","text":"Candidate from claude: 42."}',
        codex: '{"kind":"answer","text":"Candidate from codex: forty-two."}',
        gemini: '{"kind":"answer","text":"Candidate from gemini: 6 times 7."}',
      }, [{
        match: "=== Proposed next steps ===",
        reply: '{"kind":"answer","text":"The council agrees: the answer is 42."}',
      }]),
    });
    try {
      const project = join(dir, "project");
      await Deno.mkdir(project);
      const out = await runClaude(
        project,
        await claudeEnv(dir, gateway.port),
        "What is 6 times 7?",
      );
      assert.equal(out.code, 0, `claude failed:\n${out.stdout}\n${out.stderr}`);
      assert.equal(out.final?.is_error, false);
      assert.equal(out.final?.result, "The council agrees: the answer is 42.");
      // Our progress thinking block was accepted and shown as the assistant's thinking.
      const thinking = out.events.flatMap((e) => {
        const content = (e.message as { content?: { type: string; thinking?: string }[] })
          ?.content ?? [];
        return e.type === "assistant" ? content.filter((b) => b.type === "thinking") : [];
      });
      assert.ok(
        thinking.some((b) => /council: 3 agents/.test(b.thinking ?? "")),
        `no progress thinking block with the recap in:\n${JSON.stringify(thinking)}`,
      );
      const calls = await readFakeLog(log);
      assert.equal(calls.length, 4, "three children and one synthesizer");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

for (const [version, cli] of CLAUDE_CODES) {
  Deno.test({
    name: `claude code ${version}: tool loop — council proposes Read in the recovered cwd, ` +
      "host runs it, the single-agent continuation answers",
    ignore: !cli.path,
    fn: () => toolLoopInProject(cli.path!),
  });
}

async function toolLoopInProject(cli: string) {
  {
    await using scratch = await tempDir("e2e-claude-tool-");
    const dir = scratch.path;
    const project = join(dir, "project");
    await Deno.mkdir(project);
    const notes = join(project, "notes.txt");
    await Deno.writeTextFile(notes, "ZEBRA-7 opens the notes\nsecond line\n");
    const log = join(dir, "fakes.log");
    const read = JSON.stringify({ kind: "tool", name: "Read", input: { file_path: notes } });
    const answer = JSON.stringify({
      kind: "answer",
      text: "The first line is: ZEBRA-7 opens the notes",
    });
    // Every child proposes Read until the tool result (with the file's text) is in its prompt.
    const rules = [{ match: "ZEBRA-7 opens", reply: answer }];
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      fanOutScope: "first-turn",
      // Every child is awaited (two identical proposals would otherwise end the wait at once).
      quorum: { minAnswers: 0 },
      defaultAgents: [
        fakeAgent("claude", { reply: read, rules, log }),
        fakeAgent("codex", { reply: read, rules, log }),
        fakeAgent("gemini", { reply: read, rules, log }),
      ],
    });
    try {
      const out = await runClaude(
        project,
        await claudeEnv(dir, gateway.port),
        "What is the first line of notes.txt? Use the Read tool.",
        [],
        cli,
      );
      assert.equal(out.code, 0, `claude failed:\n${out.stdout}\n${out.stderr}`);
      assert.equal(out.final?.result, "The first line is: ZEBRA-7 opens the notes");
      // Claude Code executed our tool_use: its tool_result carried the file's first line.
      const toolResults = out.events.filter((e) => e.type === "user").map((e) => JSON.stringify(e));
      assert.ok(toolResults.some((t) => t.includes("ZEBRA-7")), "Read ran in the host");

      const calls = await readFakeLog(log);
      assert.equal(calls.length, 4, "3 children on the first turn, 1 on the continuation");
      for (const call of calls) {
        assert.equal(call.cwd, project, "children run in the recovered cwd");
      }
      const lines = gateway.lines();
      const starts = turnStarts(lines);
      assert.equal(starts.length, 2, lines.join("\n"));
      assert.match(starts[0], /continuation=false/);
      assert.match(starts[1], /continuation=true/);
      const consulted = lines.filter((l) => l.includes("consulting "));
      assert.match(consulted[0], /consulting 3 agents/);
      assert.match(consulted[1], /consulting one agent/);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  }
}

Deno.test({
  name: "claude code: a haiku (background) model runs exactly one child pinned to that model",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-haiku-");
    const dir = scratch.path;
    const log = join(dir, "fakes.log");
    const reply = '{"kind":"answer","text":"hi from the small model"}';
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      defaultAgents: fakeCouncil(log, { claude: reply, codex: reply, gemini: reply }),
    });
    try {
      const project = join(dir, "project");
      await Deno.mkdir(project);
      const model = "claude-haiku-4-5-20251001";
      const out = await runClaude(project, await claudeEnv(dir, gateway.port), "say hi", [
        "--model",
        model,
      ]);
      assert.equal(out.code, 0, `claude failed:\n${out.stdout}\n${out.stderr}`);
      assert.equal(out.final?.result, "hi from the small model");
      const calls = await readFakeLog(log);
      assert.equal(calls.length, 1, "exactly one child");
      assert.equal(calls[0].cli, "claude");
      assert.equal(calls[0].model, model);
      assert.doesNotMatch(calls[0].prompt, /Be thorough/);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

Deno.test({
  name: "claude code: count_tokens on a large file read gets the gateway's estimate",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-count-");
    const dir = scratch.path;
    const project = join(dir, "project");
    await Deno.mkdir(project);
    const big = join(project, "big.txt");
    const line = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n";
    await Deno.writeTextFile(big, `QUOKKA-3 starts here\n${line.repeat(1500)}`);
    const log = join(dir, "fakes.log");
    const read = JSON.stringify({ kind: "tool", name: "Read", input: { file_path: big } });
    const rules = [{ match: "QUOKKA-3 starts", reply: '{"kind":"answer","text":"read it"}' }];
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      logLevel: "debug",
      defaultAgents: [fakeAgent("claude", { reply: read, rules, log })],
    });
    try {
      const out = await runClaude(
        project,
        await claudeEnv(dir, gateway.port),
        "Read big.txt and tell me its first line.",
      );
      assert.equal(out.code, 0, `claude failed:\n${out.stdout}\n${out.stderr}`);
      assert.equal(out.final?.result, "read it");
      const counted = gateway.lines().filter((l) => l.includes("/v1/messages/count_tokens"));
      assert.ok(counted.length > 0, `no count_tokens call:\n${gateway.lines().join("\n")}`);
      assert.ok(counted.every((l) => / 200 /.test(l)), counted.join("\n"));
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

Deno.test({
  name: "claude code: with auth on, the connect token works and a wrong token fails clearly",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-auth-");
    const dir = scratch.path;
    const log = join(dir, "fakes.log");
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      defaultAgents: [fakeAgent("claude", { reply: '{"kind":"answer","text":"authorized"}', log })],
    }, { SVC_GATEWAY_TOKEN: TOKEN });
    try {
      const project = join(dir, "project");
      await Deno.mkdir(project);
      const env = await claudeEnv(dir, gateway.port, TOKEN);
      assert.equal(env.ANTHROPIC_AUTH_TOKEN, TOKEN, "connect exports the gateway token");
      const ok = await runClaude(project, env, "hello");
      assert.equal(ok.code, 0, `claude failed:\n${ok.stdout}\n${ok.stderr}`);
      assert.equal(ok.final?.result, "authorized");

      const bad = await runClaude(
        project,
        { ...env, ANTHROPIC_AUTH_TOKEN: "wrong-token" },
        "hello",
      );
      assert.notEqual(bad.code, 0);
      assert.equal(bad.final?.is_error, true);
      assert.match(String(bad.final?.result), /401|unauthorized/i);
      assert.equal((await readFakeLog(log)).length, 1, "no child ran for the refused request");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

for (const [version, cli] of CODEXES) {
  Deno.test({
    name: `codex ${version}: exec gets the council's answer as agent_message and progress as ` +
      "reasoning",
    ignore: !cli.path,
    fn: () => codexAnswer(cli.path!),
  });
}

async function codexAnswer(cli: string) {
  await using scratch = await tempDir("e2e-codex-answer-");
  const dir = scratch.path;
  const log = join(dir, "fakes.log");
  const gateway = await spawnGateway(dir, {
    fanOutPolicy: "always",
    streamProgress: true,
    defaultAgents: fakeCouncil(log, {
      claude: "Draft from claude: 42.",
      codex: "Draft from codex: forty-two.",
      gemini: "Draft from gemini: 6*7.",
    }, [{ match: "=== Candidate A ===", reply: "Council answer: 6 times 7 is 42." }]),
  });
  try {
    const project = join(dir, "project");
    await Deno.mkdir(project);
    const out = await runCodex(
      project,
      await codexEnv(dir, gateway.port),
      "What is 6 times 7?",
      [],
      cli,
    );
    assert.equal(out.code, 0, `codex failed:\n${out.stdout}\n${out.stderr}`);
    const messages = out.items.filter((i) => i.type === "agent_message");
    assert.deepEqual(messages.map((m) => m.text), ["Council answer: 6 times 7 is 42."]);
    const reasoning = out.items.filter((i) => i.type === "reasoning");
    assert.ok(
      reasoning.some((r) => /council: 3 agents/.test(r.text ?? "")),
      `no reasoning item with the recap:\n${out.stdout}`,
    );
    assert.ok(out.events.some((e) => e.type === "turn.completed"));
    const calls = await readFakeLog(log);
    assert.equal(calls.length, 4, "three children and one synthesizer");
    // The cwd comes from <environment_context>: the synthesizer works in it, and each child
    // of this fanned-out answer turn in its own copy of it, which its prompt names instead.
    const [synth, ...children] = [...calls].sort((a, b) =>
      Number(b.prompt.includes("=== Candidate A ===")) -
      Number(a.prompt.includes("=== Candidate A ==="))
    );
    assert.equal(synth.cwd, project);
    assert.equal(new Set(children.map((c) => c.cwd)).size, 3);
    for (const child of children) {
      assert.match(child.cwd, /\/council-gateway\/workspaces\/[^/]+\/child-\d$/);
      assert.ok(child.prompt.includes(`<cwd>${child.cwd}</cwd>`), child.prompt.slice(0, 2000));
    }
  } finally {
    assert.equal(await gateway.stop(), 0);
  }
}

Deno.test({
  name: "codex: with auth on, the connect token works and a wrong token fails clearly",
  ignore: !codex.path,
  async fn() {
    await using scratch = await tempDir("e2e-codex-auth-");
    const dir = scratch.path;
    const log = join(dir, "fakes.log");
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      defaultAgents: [fakeAgent("claude", { reply: "authorized", log })],
    }, { SVC_GATEWAY_TOKEN: TOKEN });
    try {
      const project = join(dir, "project");
      await Deno.mkdir(project);
      const env = await codexEnv(dir, gateway.port, TOKEN);
      const ok = await runCodex(project, env, "hello");
      assert.equal(ok.code, 0, `codex failed:\n${ok.stdout}\n${ok.stderr}`);
      assert.deepEqual(
        ok.items.filter((i) => i.type === "agent_message").map((i) => i.text),
        ["authorized"],
      );
      const envName = Object.keys(parseExports(
        await connect(dir, ["codex", "--env", "--port", String(gateway.port)], {
          SVC_GATEWAY_TOKEN: TOKEN,
        }),
      ))[0];
      const bad = await runCodex(project, { ...env, [envName]: "wrong-token" }, "hello");
      assert.notEqual(bad.code, 0);
      const failed = bad.events.find((e) => e.type === "turn.failed") as
        | { error?: { message?: string } }
        | undefined;
      assert.match(String(failed?.error?.message), /unauthorized|401/i, bad.stdout);
      assert.equal((await readFakeLog(log)).length, 1, "no child ran for the refused request");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});
