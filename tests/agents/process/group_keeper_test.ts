/**
 * What keeps children from outliving the gateway: the watchdog ends the groups still listed
 * when its pipe closes; the record lets a later start end a dead gateway's groups, never a live
 * gateway's, never a process that merely reuses a recorded pid.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  formatRecord,
  GroupRecord,
  parseRecord,
  reapLeftovers,
  recordDirectory,
} from "../../../src/agents/process/group_record.ts";
import { machineGroupSpawn } from "../../../src/agents/process/group_spawn.ts";
import { Watchdog } from "../../../src/agents/process/watchdog.ts";
import { eventually } from "../../support/wait.ts";
import { isGone, tempDir } from "../../support/agent_runner.ts";

const posix = Deno.build.os !== "windows";

/** `sleep 30` leading its own process group, ended (and reaped) when the scope ends. */
function sleeper(): { pid: number } & AsyncDisposable {
  const child = new Deno.Command("sleep", {
    args: ["30"],
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return {
    pid: child.pid,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}

Deno.test("recordDirectory: the runtime dir, else the state dir, else ~/.local/state", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(
    recordDirectory(env({ XDG_RUNTIME_DIR: "/run/user/7", XDG_STATE_HOME: "/s", HOME: "/h" })),
    "/run/user/7/council-gateway",
  );
  assert.equal(recordDirectory(env({ XDG_STATE_HOME: "/s", HOME: "/h" })), "/s/council-gateway");
  assert.equal(recordDirectory(env({ HOME: "/h" })), "/h/.local/state/council-gateway");
  assert.equal(
    recordDirectory(env({ XDG_RUNTIME_DIR: "relative", HOME: "/h" })),
    "/h/.local/state/council-gateway",
  );
  assert.equal(recordDirectory(env({})), undefined);
});

Deno.test("record: written and read back, anything else ignored", () => {
  const groups = new Map([[1234, 1_700_000_000_000], [99, 5]]);
  assert.deepEqual(parseRecord(formatRecord(groups)), groups);
  assert.deepEqual(
    parseRecord("group 1 5\ngroup x 5\nnoise\ngroup 7\n\ngroup 8 9"),
    new Map([[8, 9]]),
  );
});

Deno.test({
  name: "watchdog: closing its pipe ends the groups still listed, not those removed",
  ignore: !posix,
  async fn() {
    await using listed = sleeper();
    await using removed = sleeper();
    const watchdog = Watchdog.start({ groupSpawn: machineGroupSpawn(), graceMs: 1_000 }, [
      listed.pid,
    ]);
    watchdog.add(removed.pid);
    watchdog.remove(removed.pid);
    await watchdog.close();
    await eventually(() => isGone(listed.pid), "the listed group to end", 5_000);
    assert.ok(!isGone(removed.pid), "a removed group was left alone");
  },
});

Deno.test({
  name: "record: a dead gateway's groups are ended, a live one's and a reused pid are not",
  ignore: !posix,
  async fn() {
    await using dirScope = await tempDir();
    const dir = join(dirScope.path, "council-gateway");
    await Deno.mkdir(dir);
    await using left = sleeper();
    await using reused = sleeper();
    await using ownedByLive = sleeper();
    // A gateway that died: its lock file is there, unlocked.
    await Deno.writeTextFile(join(dir, "1-dead.lock"), "");
    await Deno.writeTextFile(
      join(dir, "1-dead.groups"),
      formatRecord(new Map([[left.pid, Date.now()], [reused.pid, Date.now() - 3_600_000]])),
    );
    // A gateway that lives (this process, through another open file: the lock holds).
    const live = await GroupRecord.create(dir, (err) => assert.fail(String(err)));
    try {
      live.add(ownedByLive.pid);
      const reaped = await reapLeftovers(dir, 500);
      assert.deepEqual(reaped, { records: 1, groups: 1 });
      await eventually(() => isGone(left.pid), "the dead gateway's group to end", 5_000);
      assert.ok(!isGone(reused.pid), "a pid recorded an hour before this process started");
      assert.ok(!isGone(ownedByLive.pid), "a live gateway's group");
      const names = [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
      assert.deepEqual(names.filter((name) => name.startsWith("1-dead")), []);
      assert.equal(names.filter((name) => name.endsWith(".lock")).length, 1);
    } finally {
      await live.close();
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "a closed record leaves nothing");
  },
});
