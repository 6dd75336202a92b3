/**
 * `eval` with the REAL Claude Code as its host (`claude -p` in the run's copy, pointed at the
 * run's gateway) on one small task, the members scripted: the host carries out the chosen Bash
 * call, reports its result under the council's id, and the hidden check passes. Skipped loudly when the CLI is not installed (see
 * tests/agents/real_claude_test.ts for how to install it).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evalCommand } from "../../src/eval/mod.ts";
import { readResults } from "../../src/eval/results.ts";
import { readSeatRecords } from "../../src/ledger/records_file.ts";
import { findTestCli } from "../support/agent_runner.ts";
import { fakeAgent } from "../fixtures/fakes.ts";

const claude = findTestCli("claude", /Claude Code/);
if (!claude.path) console.log(`eval_real_claude_test: skipped: ${claude.reason}`);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

const bash = (command: string) =>
  JSON.stringify({ kind: "tool", name: "Bash", input: { command, description: "write it" } });

Deno.test({
  name: "eval drives the real Claude Code through the arm's gateway and checks the result",
  ignore: !claude.path,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "eval-real-claude-" });
    try {
      const task = join(root, "greeting");
      await Deno.mkdir(join(task, "workspace"), { recursive: true });
      await Deno.writeTextFile(join(task, "workspace", "greeting.txt"), "hallo\n");
      await Deno.writeTextFile(
        join(task, "task.yaml"),
        "prompt: Please fix the greeting in greeting.txt\n" +
          "check: grep -qx hello greeting.txt\ntimeoutSec: 10\nhostTimeoutSec: 120\n",
      );
      const rules = [
        { match: "echo hello >", reply: '{"kind":"answer","text":"Fixed."}' },
        { match: "Please fix the greeting", reply: bash("echo hello > greeting.txt") },
      ];
      const config = join(root, "council.yaml");
      await Deno.writeTextFile(
        config,
        JSON.stringify({
          fanOutPolicy: "always",
          defaultAgents: [fakeAgent("claude", { rules }, { name: "alpha" })],
        }),
      );
      const home = join(root, "home");
      await Deno.mkdir(home);
      const out: string[] = [];
      const err: string[] = [];
      const code = await evalCommand(
        [
          task,
          "--config",
          config,
          "--arm",
          "best-of:alpha:2",
          "--host-command",
          claude.path!,
          "--json",
        ],
        {
          env: (name) => Deno.env.get(name),
          cwd: root,
          stdout: (text) => void out.push(text),
          stderr: (text) => void err.push(text),
        },
        {},
        {
          self: { command: Deno.execPath(), args: ["run", "-A", MAIN] },
          // A scratch HOME for Claude Code; the gateway's Deno keeps its module cache.
          environment: {
            PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
            HOME: home,
            DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
          },
          signal: new AbortController().signal,
          terminal: false,
        },
      );
      const [result] = readResults(join(root, "eval-out", "results.jsonl"));
      const log = await Deno.readTextFile(
        join(root, "eval-out", "logs", "best-of_alpha_2--greeting--1.log"),
      );
      assert.equal(code, 0, err.join(""));
      assert.equal(result.passed, true, `${JSON.stringify(result)}\n${log.slice(-3000)}`);
      assert.ok(result.turns >= 2, JSON.stringify(result));
      assert.equal(JSON.parse(out.join("")).arms[0].passed, 1);
      // Claude Code took the council's chosen call under its id and reported it back: ok.
      const records = readSeatRecords(
        join(root, "eval-out", "logs", "best-of_alpha_2--greeting--1.ledger.jsonl"),
      );
      const outcomes = records.flatMap((r) => r.kind === "outcome" ? [r.outcome] : []);
      assert.deepEqual(outcomes.map((o) => o.result), ["ok"]);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
