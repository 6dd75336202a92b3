/**
 * Real host traffic through the real gateway (its children are the project's fake CLIs): the
 * session-title request runs one child, the session key survives `--continue`, Claude Code's
 * hint headers and model discovery work as `connect claude` sets them up, and Codex gets one
 * clear answer (no retries) when no agent produced anything, on any model id.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { spawnGateway } from "../support/gateway_process.ts";
import { tempDir } from "../support/git_repos.ts";
import {
  claude,
  CLAUDE_CODES,
  claudeEnv,
  claudeOld,
  codex,
  codexEnv,
  fakeCouncil,
  HOST_VERSIONS,
  runClaude,
  runCodex,
  turnStarts,
} from "./hosts.ts";

/** Only answer turns (a title) get this prompt; the main request is an action turn. */
const ANSWER_TURN = "Write the assistant's next reply";

async function project(dir: string): Promise<string> {
  const path = join(dir, "project");
  await Deno.mkdir(path);
  return path;
}

Deno.test({
  name: "claude code 2.1.197: its session-title request runs one child; the prompt convenes " +
    "the council",
  ignore: !claudeOld.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-title-");
    const dir = scratch.path;
    const log = join(dir, "fakes.log");
    const answer = '{"kind":"answer","text":"Heaps keep the smallest item on top."}';
    const title = [{ match: ANSWER_TURN, reply: '{"title":"Heap basics"}' }];
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      defaultAgents: [
        fakeAgent("claude", { reply: answer, rules: title, log }),
        fakeAgent("codex", { reply: answer, rules: title, log }),
        fakeAgent("gemini", { reply: answer, rules: title, log }),
      ],
    });
    try {
      const env = await claudeEnv(dir, gateway.port);
      // Without this (which `connect claude` sets) Claude Code 2.1.197 asks for a title in -p.
      delete env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC;
      const cwd = await project(dir);
      const out = await runClaude(cwd, env, "Tell me how a binary heap works", [], claudeOld.path);
      assert.equal(out.code, 0, `claude failed:\n${out.stdout}\n${out.stderr}`);
      assert.equal(out.final?.result, "Heaps keep the smallest item on top.");
      const lines = gateway.lines();
      const titles = (await readFakeLog(log)).filter((c) => c.prompt.includes(ANSWER_TURN));
      assert.equal(titles.length, 1, `the title ran one child:\n${lines.join("\n")}`);
      assert.equal(titles[0].model, "claude-opus-4-8", "pinned to the host's model");
      assert.ok(
        lines.some((l) => /consulting one agent: fake-claude .*— housekeeping \(/.test(l)),
        lines.join("\n"),
      );
      assert.ok(lines.some((l) => l.includes("consulting 3 agents")), "the prompt's council");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

for (const [version, cli] of CLAUDE_CODES) {
  Deno.test({
    name: `claude code ${version}: the session key stays the same across --continue`,
    ignore: !cli.path,
    async fn() {
      await using scratch = await tempDir("e2e-claude-continue-");
      const dir = scratch.path;
      const gateway = await spawnGateway(dir, {
        fanOutPolicy: "never",
        defaultAgents: [fakeAgent("claude", { reply: '{"kind":"answer","text":"noted"}' })],
      });
      try {
        const env = await claudeEnv(dir, gateway.port);
        const cwd = await project(dir);
        const first = await runClaude(cwd, env, "Remember the word LANTERN", [], cli.path);
        assert.equal(first.code, 0, `claude failed:\n${first.stdout}\n${first.stderr}`);
        const again = await runClaude(cwd, env, "What was the word?", ["--continue"], cli.path);
        assert.equal(again.code, 0, `claude --continue failed:\n${again.stdout}\n${again.stderr}`);
        const starts = turnStarts(gateway.lines());
        assert.ok(starts.length >= 2, starts.join("\n"));
        const sessions = new Set(starts.map((l) => /session=(\w+)/.exec(l)?.[1]));
        assert.equal(sessions.size, 1, `one session across --continue:\n${starts.join("\n")}`);
        assert.ok(
          gateway.lines().some((l) => / session turns=2 /.test(l)),
          "the second invocation counted as the session's second turn",
        );
      } finally {
        assert.equal(await gateway.stop(), 0);
      }
    },
  });
}

async function findFile(dir: string, name: string): Promise<string | undefined> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isFile && entry.name === name) return path;
    if (entry.isDirectory) {
      const found = await findFile(path, name);
      if (found) return found;
    }
  }
  return undefined;
}

Deno.test({
  name:
    `claude code ${HOST_VERSIONS.claude} as \`connect claude\` sets it up: hint headers label its turns, and ` +
    "the council is in its model list as claude-council",
  ignore: !claude.path,
  async fn() {
    await using scratch = await tempDir("e2e-claude-hints-");
    const dir = scratch.path;
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      logLevel: "debug",
      defaultAgents: fakeCouncil(join(dir, "fakes.log"), {
        claude: '{"kind":"answer","text":"labelled"}',
        codex: "x",
        gemini: "x",
      }),
    });
    try {
      const env = await claudeEnv(dir, gateway.port);
      const out = await runClaude(await project(dir), env, "Say something");
      assert.equal(out.code, 0, `claude failed:\n${out.stdout}\n${out.stderr}`);
      const lines = gateway.lines();
      assert.ok(
        lines.some((l) => l.includes("traffic=council turn (x-claude-code-request-class: main)")),
        lines.join("\n"),
      );
      assert.ok(lines.some((l) => /GET \/v1\/models 200/.test(l)), "Claude Code asked");
      const cache = await findFile(env.HOME, "gateway-models.json");
      assert.ok(cache, "Claude Code cached the gateway's models");
      const models = JSON.parse(await Deno.readTextFile(cache)).models as {
        id: string;
        description?: string;
      }[];
      const council = models.find((m) => m.id === "claude-council");
      assert.ok(council, JSON.stringify(models));
      assert.match(council.description ?? "", /fake-claude .*fake-codex .*fake-gemini/);
      assert.ok(!models.some((m) => m.id === "svc-council"), "Claude Code keeps claude ids only");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

Deno.test({
  name: "codex: when no agent produces anything, exec shows the explanation once — no retries",
  ignore: !codex.path,
  async fn() {
    await using scratch = await tempDir("e2e-codex-failed-");
    const dir = scratch.path;
    const crash = (name: "claude" | "codex" | "gemini") =>
      fakeAgent(name, { modes: ["crash"], stderr: `${name} CLI: not signed in` });
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      defaultAgents: [crash("claude"), crash("codex"), crash("gemini")],
    });
    try {
      const out = await runCodex(await project(dir), await codexEnv(dir, gateway.port), "hi");
      assert.equal(out.code, 0, `codex failed:\n${out.stdout}\n${out.stderr}`);
      const messages = out.items.filter((i) => i.type === "agent_message");
      assert.equal(messages.length, 1, out.stdout);
      assert.match(messages[0].text ?? "", /could not produce an answer/);
      assert.match(messages[0].text ?? "", /claude: .*claude CLI: not signed in/);
      assert.ok(!out.events.some((e) => e.type === "error"), `no reconnects:\n${out.stdout}`);
      assert.ok(out.events.some((e) => e.type === "turn.completed"));
      assert.equal(turnStarts(gateway.lines()).length, 1, "one council turn, not six");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

Deno.test({
  name: "codex: any model id works — gpt-6-sol with the request shape it brings",
  ignore: !codex.path,
  async fn() {
    await using scratch = await tempDir("e2e-codex-sol-");
    const dir = scratch.path;
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      defaultAgents: [fakeAgent("claude", { reply: "Answered for gpt-6-sol." })],
    });
    try {
      const env = await codexEnv(dir, gateway.port);
      const out = await runCodex(await project(dir), env, "hello", ["-m", "gpt-6-sol"]);
      assert.equal(out.code, 0, `codex failed:\n${out.stdout}\n${out.stderr}`);
      assert.deepEqual(
        out.items.filter((i) => i.type === "agent_message").map((i) => i.text),
        ["Answered for gpt-6-sol."],
      );
      assert.ok(turnStarts(gateway.lines()).some((l) => l.includes("model=gpt-6-sol")));
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});
