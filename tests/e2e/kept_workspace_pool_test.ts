/**
 * The warm pool serves isolated children, through the real gateway with the defaults a user gets
 * (isolation on, the warm pool as shipped) and fake CLIs: a session's second fanned-out answer
 * turn resets the first turn's worktrees and its children are ones started before it was asked.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnGateway } from "../support/gateway_process.ts";
import { gitRepo, linkedWorktrees, listDir, tempDir } from "../support/git_repos.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { eventually } from "../support/wait.ts";

/**
 * The pid of a process whose working directory is each of `dirs` (Linux's /proc), by dir. Read by
 * a shell: the test task's permissions (the start task's) do not let Deno read /proc itself.
 */
async function processesIn(dirs: readonly string[]): Promise<Map<string, number>> {
  const script = 'for p in /proc/[0-9]*; do printf "%s %s\\n" "${p#/proc/}" ' +
    '"$(readlink "$p/cwd" 2>/dev/null)"; done';
  const out = await new Deno.Command("sh", { args: ["-c", script], stderr: "null" }).output();
  const found = new Map<string, number>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const [pid, cwd] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
    if (dirs.includes(cwd)) found.set(cwd, Number(pid));
  }
  return found;
}

async function ask(origin: string, project: string, text: string): Promise<void> {
  const response = await fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-claude-code-session-id": "s-1" },
    body: JSON.stringify({
      model: "svc-council",
      max_tokens: 1000,
      system: `You are a coding assistant.\n<env>\nPrimary working directory: ${project}\n</env>`,
      messages: [{ role: "user", content: text }],
    }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  await response.json();
}

Deno.test({
  name: "e2e kept workspaces: a session's second turn's isolated children are pooled ones",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using scratch = await tempDir("cg-kept-pool-");
    const dir = scratch.path;
    const project = join(dir, "project");
    const log = join(dir, "fake.log");
    await Deno.mkdir(project);
    await gitRepo(project, { "notes.txt": "remember the milk\n" });
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      fanOutScope: "every-turn",
      defaultAgents: [
        fakeAgent("claude", { reply: "claude's answer", log }, { name: "claude" }),
        fakeAgent("codex", { reply: "codex's answer", log }, { name: "codex" }),
      ],
    });
    const workspaces = join(dir, ".local", "state", "council-gateway", "workspaces");
    const isChild = (cwd: string) => cwd.startsWith(`${workspaces}/s-`);
    try {
      await ask(gateway.origin, project, "What is notes.txt for?");
      const first = (await readFakeLog(log)).filter((call) => isChild(call.cwd));
      assert.equal(first.length, 2, "two isolated children");

      // Refilled after the turn: a CLI waits in each child's worktree for the next one.
      const waiting = await eventually(async () => {
        const found = await processesIn(first.map((call) => call.cwd));
        return found.size === first.length && found;
      }, "a started CLI waiting in each kept worktree");
      await ask(gateway.origin, project, "Shorten it.");
      const second = (await readFakeLog(log)).filter((c) => isChild(c.cwd)).slice(2);
      assert.deepEqual(second.map((c) => c.cwd).sort(), first.map((c) => c.cwd).sort());
      for (const call of second) {
        assert.equal(call.pid, waiting.get(call.cwd), `${call.cli}: the CLI that waited there`);
      }
      assert.match(
        gateway.lines().join("\n"),
        /reset 2 isolated workspaces kept from the session's last turn/,
      );
    } finally {
      await gateway.stop();
    }
    assert.deepEqual(await listDir(workspaces), [], "shutdown removes the kept slot");
    assert.deepEqual(linkedWorktrees(project), []);
  },
});
