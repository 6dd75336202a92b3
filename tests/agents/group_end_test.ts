/**
 * A child is done when its own process has exited and its group has no live member: a zombie
 * left in the group (exited, reaped by nobody) does not hold the run up.
 */
import assert from "node:assert/strict";
import { parseProcStat, psListsLiveMember } from "../../src/agents/group_end.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { EventLog, readPids, tempDir, testRunner } from "./support.ts";

const onLinux = Deno.build.os === "linux";

Deno.test("parseProcStat: state and group, whatever the command name holds", () => {
  assert.deepEqual(parseProcStat("42 (sh) Z 1 40 40 0 -1 4228"), { state: "Z", pgid: 40 });
  assert.deepEqual(parseProcStat("43 (a) b (c)) S 7 43 43 0"), { state: "S", pgid: 43 });
  assert.equal(parseProcStat("garbage"), undefined);
});

Deno.test("psListsLiveMember: zombies and other groups do not count (ps -A -o pgid= -o stat=)", () => {
  const ps = ["    1 Ss", "  700 Z", "  700 Z+", "  701 S+", " 7000 R"].join("\n");
  assert.equal(psListsLiveMember(ps, 700), false);
  assert.equal(psListsLiveMember(ps, 701), true);
  assert.equal(psListsLiveMember(ps, 7000), true);
  assert.equal(psListsLiveMember(ps, 70), false);
});

/** The members of a process group and their states, from /proc. */
function groupStates(pgid: number): string[] {
  const states: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = parseProcStat(Deno.readTextFileSync(`/proc/${entry.name}/stat`));
      if (stat?.pgid === pgid) states.push(stat.state);
    } catch { /* gone meanwhile */ }
  }
  return states;
}

Deno.test({
  name: "process: a child that leaves an unreaped zombie in its group finishes promptly",
  ignore: !onLinux,
  async fn() {
    await using dirScope = await tempDir();
    const keeperFile = `${dirScope.path}/keeper`;
    // The keeper forks a short-lived process into the child's group, then leaves the group
    // (setsid) without ever reaping it: the group keeps a zombie whose parent lives elsewhere,
    // as a defunct sh left by Claude Code does while PID 1 is slow to reap it, or never does.
    const keeper = `sleep 0 & exec setsid sh -c "echo \\$\\$ > ${keeperFile}; exec sleep 30"`;
    const script = `sh -c '${keeper}' </dev/null >/dev/null 2>&1 &\n` +
      `while [ ! -s ${keeperFile} ]; do sleep 0.01; done\necho answer`;
    const agent = fakeAgent("command", {}, { command: "sh", args: ["-c", script] });
    const events = new EventLog();
    try {
      // A grace longer than the bound below: waiting on the zombie would wait it out.
      const result = await testRunner({ killGraceMs: 5_000 })(agent, "hi", {
        role: "child",
        onEvent: events.onEvent,
      });
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "answer\n");
      assert.deepEqual(groupStates(events.pid!), ["Z"], "the group still holds the zombie");
      assert.ok(result.durationMs < 2_500, `took ${result.durationMs} ms`);
    } finally {
      for (const pid of await readPids(keeperFile).catch(() => [])) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* already gone */ }
      }
    }
  },
});
