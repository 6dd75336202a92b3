/**
 * A gateway killed (SIGKILL) in the middle of a fanned-out answer turn leaves its children's
 * git worktrees behind; the next gateway started by the same user removes them at start-up.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnGateway } from "../support/gateway_process.ts";
import { gitRepo, linkedWorktrees, listDir } from "../support/git_repos.ts";
import { within } from "../support/wait.ts";

/** A child that waits, and ends once the gateway that started it is gone. */
const WAITING_CHILD = {
  runner: "command",
  model: "wait",
  command: "sh",
  args: ["-c", "while kill -0 $PPID 2>/dev/null; do sleep 0.1; done"],
};

Deno.test({
  name: "e2e workspace: the worktrees of a crashed gateway are removed by the next start",
  ignore: Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "cg-ws-crash-" }));
    const project = join(dir, "project");
    await Deno.mkdir(project);
    await gitRepo(project, { "a.txt": "a\n" });
    const config = {
      fanOutPolicy: "always",
      councilSize: 2,
      defaultAgents: [WAITING_CHILD, { ...WAITING_CHILD, name: "other" }],
    };
    const state = join(dir, ".local", "state", "council-gateway", "workspaces");
    try {
      const first = await spawnGateway(dir, config);
      const turn = fetch(`${first.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "svc-council",
          max_tokens: 100,
          system: `Primary working directory: ${project}`,
          messages: [{ role: "user", content: "Refactor the module and explain the design." }],
        }),
      }).then((r) => r.body?.cancel(), () => {});
      await within(
        first.waitForLine(/each child works in its own git worktree/),
        "worktrees",
        60_000,
      );
      assert.equal(linkedWorktrees(project).length, 2, "the turn's worktrees exist");
      first.kill("SIGKILL");
      await first.exited;
      await turn;
      assert.equal(linkedWorktrees(project).length, 2, "a crash cannot clean up");
      assert.equal((await listDir(state)).length, 1);

      const next = await spawnGateway(dir, config);
      try {
        await within(
          next.waitForLine(/removed 1 isolated workspaces left by a gateway that stopped/),
          "the start-up sweep",
          60_000,
        );
        assert.deepEqual(linkedWorktrees(project), []);
        assert.deepEqual(await listDir(state), []);
      } finally {
        await next.stop();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
