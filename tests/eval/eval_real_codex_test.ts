/**
 * `eval --host codex` with the REAL Codex CLI as the host (`codex exec` in the run's copy, its
 * provider the run's gateway) on one small task: the lone member, a plain command, fixes the file
 * in the copy and the hidden check passes. Skipped loudly when the CLI is not installed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evalCommand } from "../../src/eval/mod.ts";
import { readResults } from "../../src/eval/results.ts";
import { findTestCli } from "../support/agent_runner.ts";

const codex = findTestCli("codex", /codex-cli/);
if (!codex.path) console.log(`eval_real_codex_test: skipped: ${codex.reason}`);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

Deno.test({
  name: "eval --host codex drives the real Codex through the arm's gateway",
  ignore: !codex.path,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "eval-real-codex-" });
    try {
      const task = join(root, "greeting");
      await Deno.mkdir(join(task, "workspace"), { recursive: true });
      await Deno.writeTextFile(join(task, "workspace", "greeting.txt"), "hallo\n");
      await Deno.writeTextFile(
        join(task, "task.yaml"),
        "prompt: Please fix the greeting in greeting.txt\n" +
          "check: grep -qx hello greeting.txt\ntimeoutSec: 10\nhostTimeoutSec: 120\n",
      );
      // The member: a plain command that fixes the file where the gateway runs it (the copy).
      const member = {
        name: "fixer",
        runner: "command",
        model: "none",
        command: "sh",
        args: ["-c", "cat >/dev/null; echo hello > greeting.txt; echo Fixed the greeting."],
      };
      const config = join(root, "council.yaml");
      await Deno.writeTextFile(config, JSON.stringify({ defaultAgents: [member] }));
      const home = join(root, "home");
      await Deno.mkdir(join(home, ".codex"), { recursive: true });
      const out: string[] = [];
      const err: string[] = [];
      const code = await evalCommand(
        [
          task,
          "--config",
          config,
          "--arm",
          "solo:fixer",
          "--host",
          "codex",
          "--host-command",
          codex.path!,
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
          environment: {
            PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
            HOME: home,
            CODEX_HOME: join(home, ".codex"),
            DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
          },
          signal: new AbortController().signal,
          terminal: false,
        },
      );
      const [result] = readResults(join(root, "eval-out", "results.jsonl"));
      const log = await Deno.readTextFile(
        join(root, "eval-out", "logs", "solo_fixer--greeting--1.log"),
      );
      assert.equal(code, 0, err.join(""));
      assert.equal(result.passed, true, `${JSON.stringify(result)}\n${log.slice(-3000)}`);
      assert.ok(result.turns >= 1, JSON.stringify(result));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
