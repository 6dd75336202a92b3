/**
 * The council in Claude Code's own terminal UI: the real Claude Code TUI (the pinned newest) runs in tmux
 * with the status line `connect claude --settings` prints, against a gateway whose fake children
 * are slow; while the turn runs, the pane's status line shows each child's state, and after it
 * the session's totals.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findOnPath } from "../../src/base/executables.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { connect, isolatedEnv, parseExports, spawnGateway } from "../support/gateway_process.ts";
import { eventually, within } from "../support/wait.ts";
import { claude } from "./hosts.ts";
import { tempDir } from "../support/git_repos.ts";

const tmux = findOnPath("tmux", (name) => Deno.env.get(name));
const skip = !claude.path ? claude.reason : !tmux ? "no tmux on PATH" : undefined;
if (skip) console.log(`\n*** statusline_tui_test SKIPPED: ${skip} ***\n`);

function tmuxRun(socket: string, ...args: string[]): string {
  const out = new Deno.Command(tmux!, {
    args: ["-L", socket, ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .outputSync();
  return new TextDecoder().decode(out.stdout);
}

Deno.test({
  name:
    "statusline in the real Claude Code TUI: the live council while a turn runs, then its totals",
  ignore: skip !== undefined,
  async fn() {
    await using scratch = await tempDir("cg-tui-");
    const dir = scratch.path;
    const project = join(dir, "project");
    const home = join(dir, "home");
    await Deno.mkdir(project);
    await Deno.mkdir(join(home, ".claude"), { recursive: true });
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      defaultAgents: [
        fakeAgent("claude", { reply: "It builds with deno tasks.", delayMs: 2000 }, {
          name: "claude",
        }),
        fakeAgent("codex", { reply: "codex draft", delayMs: 12_000 }, { name: "codex" }),
        fakeAgent("gemini", { modes: ["crash"] }, { name: "gemini" }),
      ],
    });
    const socket = `cg-tui-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
    const flags = ["--config", join(dir, "gateway.yaml"), "--port", String(gateway.port)];
    try {
      await Deno.writeTextFile(
        join(home, ".claude", "settings.json"),
        await connect(dir, ["claude", "--settings", ...flags]),
      );
      // Skip the first-run dialogs: onboarding done, this project trusted.
      await Deno.writeTextFile(
        join(home, ".claude.json"),
        JSON.stringify({
          hasCompletedOnboarding: true,
          projects: { [project]: { hasTrustDialogAccepted: true } },
        }),
      );
      const env = {
        ...isolatedEnv(dir, parseExports(await connect(dir, ["claude", ...flags]))),
        HOME: home,
        TERM: "xterm-256color",
        DISABLE_AUTOUPDATER: "1",
        IS_SANDBOX: "1",
      };
      const command = [
        "env",
        "-i",
        ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
        claude.path!,
      ];
      tmuxRun(socket, "new-session", "-d", "-x", "150", "-y", "40", "-c", project, ...command);
      const pane = () => tmuxRun(socket, "capture-pane", "-p");
      const statusLine = () =>
        pane().split("\n").map((l) => l.trim()).find((l) => l.startsWith("council ·"));
      await within(
        eventually(
          () => statusLine() === "council · ready",
          "the status line at start",
          60_000,
          250,
        ),
        "Claude Code to start",
        60_000,
      );
      tmuxRun(socket, "send-keys", "Explain how this project builds", "Enter");
      const live = await within(
        eventually(
          () =>
            /^council · claude ✓ \d+s · codex … \d+s · gemini ✗ · \$\d+\.\d\d$/.test(
              statusLine() ?? "",
            ) && pane(),
          "the live council in the status line",
          30_000,
          250,
        ),
        "the live council",
        30_000,
      );
      console.log(`pane while the turn runs:\n${live.trimEnd()}\n`);
      const done = await within(
        eventually(
          // After the turn: the totals, then Claude Code's context use and the council's window
          // (Claude Code counts against its own model's window, larger than the council's).
          () =>
            /^council · idle · 1 turn · \$\d+\.\d\d · ctx \d+% of [\d.]+[kM] · council \d+k$/.test(
              statusLine() ?? "",
            ) && pane(),
          "idle",
          60_000,
          250,
        ),
        "the turn to end",
        60_000,
      );
      assert.match(done, /It builds with deno tasks\./, "the answer reached the TUI");
    } finally {
      tmuxRun(socket, "kill-server");
      await gateway.stop();
    }
  },
});
