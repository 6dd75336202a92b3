/**
 * A child is done when its own process has exited and its group has no live member: a zombie
 * left in the group (exited, reaped by nobody) does not hold the run up.
 */
import assert from "node:assert/strict";
import {
  listProcesses,
  parseElapsed,
  parseProcStat,
  parsePsTable,
} from "../../../src/agents/process/process_table.ts";
import { endGroup, signalGroup } from "../../../src/agents/process/group_end.ts";
import { fakeAgent } from "../../fixtures/fakes.ts";
import { EventLog, readPids, tempDir, testRunner } from "../../support/agent_runner.ts";

const onLinux = Deno.build.os === "linux";

Deno.test("parseProcStat: state and group, whatever the command name holds", () => {
  assert.deepEqual(parseProcStat("42 (sh) Z 1 40 40 0 -1 4228"), { state: "Z", pgid: 40 });
  assert.deepEqual(parseProcStat("43 (a) b (c)) S 7 43 43 0"), { state: "S", pgid: 43 });
  assert.equal(parseProcStat("garbage"), undefined);
});

Deno.test("parsePsTable: each process's group and state letter (ps -A -o pgid= -o stat=)", () => {
  const ps = ["    1 Ss", "  700 Z", "  700 Z+", "  701 S+", "", " 7000 R"].join("\n");
  assert.deepEqual(parsePsTable(ps), [
    { pgid: 1, state: "S" },
    { pgid: 700, state: "Z" },
    { pgid: 700, state: "Z" },
    { pgid: 701, state: "S" },
    { pgid: 7000, state: "R" },
  ]);
});

Deno.test("parseElapsed: ps's etime in seconds", () => {
  assert.equal(parseElapsed("   00:07"), 7);
  assert.equal(parseElapsed("12:34"), 754);
  assert.equal(parseElapsed("01:00:01"), 3601);
  assert.equal(parseElapsed("2-00:00:00"), 172800);
  assert.equal(parseElapsed(""), undefined);
});

/** The states of a process group's members. */
async function groupStates(pgid: number): Promise<string[]> {
  const table = await listProcesses();
  return (table ?? []).filter((entry) => entry.pgid === pgid).map((entry) => entry.state);
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
      // Waiting on the zombie would wait out the whole grace: a run shorter than the grace
      // proves it did not, however slow a loaded machine is to spawn the processes.
      const graceMs = 10_000;
      const result = await testRunner({ killGraceMs: graceMs })(agent, "hi", {
        role: "child",
        onEvent: events.onEvent,
      });
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "answer\n");
      assert.deepEqual(await groupStates(events.pid!), ["Z"], "the group still holds the zombie");
      assert.ok(
        result.durationMs < graceMs,
        `took ${result.durationMs} ms: the grace was waited out`,
      );
    } finally {
      for (const pid of await readPids(keeperFile).catch(() => [])) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* already gone */ }
      }
    }
  },
});

Deno.test({
  name: "process table: without ps, Linux's /proc is read through cat, as the gateway may",
  ignore: !onLinux,
  async fn() {
    await using dirScope = await tempDir();
    // The start task's permissions (no --allow-all: /proc is out of Deno's reach) and no ps.
    const script = `
      import { listProcesses, processAge } from ${
      JSON.stringify(
        new URL("../../../src/agents/process/process_table.ts", import.meta.url).href,
      )
    };
      const table = await listProcesses();
      const self = Deno.pid;
      console.log(JSON.stringify({ table, age: await processAge(self), gone: await processAge(2 ** 22 + 1) }));
    `;
    const file = `${dirScope.path}/probe.ts`;
    await Deno.writeTextFile(file, script);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-run", "--allow-read", "--allow-env", file],
      env: { PATH: dirScope.path },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const { table, age, gone } = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.ok(table.length > 1, "processes listed");
    assert.ok(table.every((p: { state: string }) => /^[A-Za-z]$/.test(p.state)));
    assert.ok(age >= 0 && age < 60, `its own age: ${age}`);
    assert.equal(gone, undefined);
  },
});

Deno.test({
  name: "endGroup: a group that is its leader alone is over at the leader's exit, not at a probe",
  ignore: !onLinux,
  async fn() {
    const child = new Deno.Command("setsid", {
      args: ["sleep", "30"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Wait until setsid(1) has made the group (its exec keeps the pid).
    for (let i = 0; i < 200 && !signalGroup(child.pid, "SIGCONT"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    let exited = false;
    child.status.then(() => (exited = true));
    const started = performance.now();
    // Probes 10 s apart: only the leader's exit can end the wait sooner.
    await endGroup(child, { graceMs: 20_000, exited: () => exited, firstProbeMs: 10_000 });
    const tookMs = performance.now() - started;
    assert.ok(tookMs < 5_000, `took ${tookMs.toFixed(0)} ms: it waited for the probe`);
    assert.equal((await child.status).signal, "SIGTERM");
  },
});
