/**
 * A prepared run: the child is spawned with its argv, cwd and environment and waits on stdin;
 * run later it gives what a direct run gives, discarded it leaves nothing behind.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import type { AgentResult } from "../../src/agents/types.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { eventually } from "../support/wait.ts";
import { EventLog, isGone, readPids, tempDir, testRunner } from "../support/agent_runner.ts";

const onLinux = Deno.build.os === "linux";

Deno.test({
  name: "prepare: a discarded child leaves no process, no grandchild and no temp dir",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using dirScope = await tempDir();
    const pidFile = `${dirScope.path}/grandchild`;
    const cwdFile = `${dirScope.path}/cwd`;
    const agent = fakeAgent("command", {}, {
      command: "sh",
      args: ["-c", `sleep 30 & echo $! > ${pidFile}; pwd > ${cwdFile}; cat >/dev/null; echo never`],
    });
    const prepared = await testRunner().prepare(agent, { role: "child" });
    const pid = prepared.pid!;
    assert.ok(pid > 0 && !isGone(pid), "the child runs before any prompt");
    const cwd = await eventually(
      async () => (await Deno.readTextFile(cwdFile).catch(() => "")).trim(),
      "the child's first words",
    );
    const [grandchild] = await readPids(pidFile);
    assert.match(cwd, /council-child-/);
    await prepared.discard();
    assert.ok(isGone(pid), `child ${pid} still runs`);
    assert.ok(isGone(grandchild), `grandchild ${grandchild} still runs`);
    await assert.rejects(Deno.stat(cwd), Deno.errors.NotFound, `${cwd} is still there`);
    await prepared.discard();
  },
});

/** A result without what differs between two runs of the same child. */
function comparable(result: AgentResult): AgentResult {
  return { ...result, durationMs: 0 };
}

Deno.test("prepare: a prepared run that is run gives what a direct run gives", async () => {
  await using dirScope = await tempDir();
  const log = `${dirScope.path}/fake.log`;
  const agent = fakeAgent("claude", { log, reply: "the same answer", costUsd: 0.0123 });
  const runner = testRunner();
  const direct = new EventLog();
  const directResult = await runner(agent, "a prompt", { role: "child", onEvent: direct.onEvent });
  const prepared = new EventLog();
  const run = await runner.prepare(agent, { role: "child" });
  const preparedResult = await run.run("a prompt", { onEvent: prepared.onEvent });
  assert.equal(preparedResult.ok, true, preparedResult.error);
  assert.deepEqual(comparable(preparedResult), comparable(directResult));
  assert.deepEqual(prepared.events.map((e) => e.type), direct.events.map((e) => e.type));
  assert.equal(prepared.pid, run.pid, "the started event names the prepared child");
  const calls = await readFakeLog(log);
  assert.deepEqual(calls.map((call) => call.prompt), ["a prompt", "a prompt"]);
  assert.deepEqual(calls[1].argv, calls[0].argv);
});

Deno.test("prepare: the time-out runs from the prompt, not from the spawn", async () => {
  const clock = new FakeClock();
  const agent = fakeAgent("claude", { reply: "late but fine" }, { timeoutMs: 1_000 });
  const prepared = await testRunner({ clock }).prepare(agent, { role: "child" });
  clock.advance(5_000);
  const result = await prepared.run("hi");
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "late but fine");
  assert.equal(clock.pending, 0);
});

Deno.test("prepare: a child that cannot start fails on run; a second run is refused", async () => {
  const runner = testRunner();
  const missing = await runner.prepare(
    fakeAgent("command", {}, { command: "council-gateway-no-such-tool", args: [] }),
    { role: "child" },
  );
  assert.equal(missing.pid, undefined);
  const events = new EventLog();
  const result = await missing.run("hi", { onEvent: events.onEvent });
  assert.equal(result.error, "fake-command: executable not found: council-gateway-no-such-tool");
  assert.deepEqual(events.events.map((e) => e.type), ["finished"]);

  const once = await runner.prepare(fakeAgent("claude"), { role: "child" });
  assert.equal((await once.run("hi")).ok, true);
  const again = await once.run("hi");
  assert.equal(again.error, "fake-claude: already run or discarded");
});

Deno.test("prepare: a prepared run whose signal is already aborted ends its child unused", async () => {
  const runner = testRunner();
  const prepared = await runner.prepare(fakeAgent("claude"), { role: "child" });
  const result = await prepared.run("hi", { signal: AbortSignal.abort() });
  assert.equal(result.aborted, true);
  assert.equal(result.error, "fake-claude: aborted before start");
  if (onLinux) assert.ok(isGone(prepared.pid!));
});
