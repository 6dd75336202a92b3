import assert from "node:assert/strict";
import { FakeClock } from "../../support/fake_clock.ts";
import { fakeAgent, readFakeLog } from "../../fixtures/fakes.ts";
import { EventLog, isGone, readPids, tempDir, testRunner } from "../../support/agent_runner.ts";

const onLinux = Deno.build.os === "linux";

Deno.test("process: a 5 MB prompt reaches the child through stdin, never argv", async () => {
  await using dirScope = await tempDir();
  const dir = dirScope.path;
  const log = `${dir}/fake.log`;
  const prompt = `${"p".repeat(5 * 1024 * 1024)}\nEND`;
  const result = await testRunner()(fakeAgent("codex", { log }), prompt, { role: "child" });
  assert.equal(result.ok, true, result.error);
  const [call] = await readFakeLog(log);
  assert.equal(call.prompt.length, prompt.length);
  assert.ok(call.prompt === prompt);
  assert.ok(call.argv.every((arg) => arg.length < 100));
  assert.equal(call.argv.at(-1), "-");
});

Deno.test("process: the time-out ends a hanging child", async () => {
  const clock = new FakeClock();
  const events = new EventLog();
  const agent = fakeAgent("claude", { modes: ["hang"], reply: "partial answer" }, {
    timeoutMs: 5_000,
  });
  const result = await testRunner({ clock })(agent, "hi", {
    role: "child",
    onEvent: (event) => {
      events.onEvent(event);
      // The child is up and streaming; now let its time run out.
      if (event.type === "text") clock.advance(5_000);
    },
  });
  assert.equal(result.ok, false);
  assert.equal(result.timedOut, true);
  assert.equal(result.error, "fake-claude: timed out after 5s");
  assert.ok(events.text.length > 0);
  assert.equal(clock.pending, 0, "the time-out timer is cleared");
  if (onLinux) assert.ok(isGone(events.pid!), "child ended");
});

Deno.test("process: abort ends the child; a child ignoring SIGTERM gets SIGKILL", async () => {
  await using dirScope = await tempDir();
  const dir = dirScope.path;
  const sigtermFile = `${dir}/sigterm`;
  const controller = new AbortController();
  const events = new EventLog();
  const agent = fakeAgent("claude", { modes: ["hang", "ignore-sigterm"], sigtermFile });
  const result = await testRunner({ killGraceMs: 200 })(agent, "hi", {
    role: "child",
    signal: controller.signal,
    onEvent: (event) => {
      events.onEvent(event);
      if (event.type === "text") controller.abort();
    },
  });
  assert.equal(result.aborted, true);
  assert.equal(result.ok, false);
  assert.equal(result.error, "fake-claude: aborted");
  assert.equal(await Deno.readTextFile(sigtermFile), "SIGTERM\n", "SIGTERM came first");
  if (onLinux) assert.ok(isGone(events.pid!));
});

Deno.test("process: aborted with a wind-down taker, the run returns at once; the group ends after", async () => {
  await using dirScope = await tempDir();
  const sigtermFile = `${dirScope.path}/sigterm`;
  const controller = new AbortController();
  const events = new EventLog();
  const windDowns: Promise<void>[] = [];
  // Ignores SIGTERM: its group is over only at the SIGKILL, a long grace after the abort.
  const agent = fakeAgent("claude", { modes: ["hang", "ignore-sigterm"], sigtermFile });
  const result = await testRunner({ killGraceMs: 3000 })(agent, "hi", {
    role: "child",
    signal: controller.signal,
    onWindDown: (ended) => windDowns.push(ended),
    onEvent: (event) => {
      events.onEvent(event);
      if (event.type === "text") controller.abort();
    },
  });
  assert.equal(result.error, "fake-claude: aborted");
  assert.equal(windDowns.length, 1);
  if (onLinux) assert.ok(!isGone(events.pid!), "returned while the child still runs");
  const finishedEvents = events.events.filter((e) => e.type === "finished").length;
  await windDowns[0];
  if (onLinux) assert.ok(isGone(events.pid!), "gone once the wind-down settles");
  assert.equal(await Deno.readTextFile(sigtermFile), "SIGTERM\n");
  assert.equal(
    events.events.filter((e) => e.type === "finished").length,
    finishedEvents,
    "nothing is reported after the run returned",
  );
});

Deno.test("process: an already-aborted signal starts nothing", async () => {
  const events = new EventLog();
  const result = await testRunner()(fakeAgent("claude"), "hi", {
    role: "child",
    signal: AbortSignal.abort(),
    onEvent: events.onEvent,
  });
  assert.equal(result.aborted, true);
  assert.equal(result.error, "fake-claude: aborted before start");
  assert.deepEqual(events.events.map((e) => e.type), ["finished"]);
});

Deno.test({
  name: "process: grandchildren holding stdout are killed with the group after a normal exit",
  ignore: !onLinux,
  async fn() {
    await using dirScope = await tempDir();
    const dir = dirScope.path;
    const pidFile = `${dir}/pids`;
    const agent = fakeAgent("claude", {
      modes: ["grandchildren"],
      pidFile,
      grandchildStdio: "inherit",
    });
    const result = await testRunner()(agent, "hi", { role: "child" });
    assert.equal(result.ok, true, result.error);
    const pids = await readPids(pidFile);
    assert.equal(pids.length, 2);
    for (const pid of pids) assert.ok(isGone(pid), `grandchild ${pid} still runs`);
  },
});

Deno.test({
  name: "process: abort kills the child's grandchildren too",
  ignore: !onLinux,
  async fn() {
    await using dirScope = await tempDir();
    const dir = dirScope.path;
    const pidFile = `${dir}/pids`;
    const controller = new AbortController();
    const agent = fakeAgent("gemini", {
      modes: ["grandchildren", "hang"],
      pidFile,
      grandchildStdio: "ignore",
    });
    const result = await testRunner()(agent, "hi", {
      role: "child",
      signal: controller.signal,
      onEvent: (event) => event.type === "text" && controller.abort(),
    });
    assert.equal(result.aborted, true);
    for (const pid of await readPids(pidFile)) assert.ok(isGone(pid), `grandchild ${pid}`);
  },
});

Deno.test({
  name: "process: a process that left the group and holds stdout does not hang the run",
  ignore: !onLinux,
  async fn() {
    await using dirScope = await tempDir();
    const pidFile = `${dirScope.path}/escaped`;
    try {
      const agent = fakeAgent("command", {}, {
        command: "sh",
        args: ["-c", `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 30' & echo answer`],
      });
      const result = await testRunner({ killGraceMs: 100 })(agent, "hi", { role: "child" });
      assert.equal(result.ok, true, result.error);
      assert.equal(result.text, "answer\n");
    } finally {
      for (const pid of await readPids(pidFile).catch(() => [])) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* already gone */ }
      }
    }
  },
});

Deno.test("process: a 64 MB flood of text keeps only the capped text", async () => {
  const events = new EventLog();
  const agent = fakeAgent("claude", { modes: ["flood"], floodMb: 64, reply: "after the flood" });
  let usageEvents = 0;
  const result = await testRunner({ maxTextChars: 1_000_000 })(agent, "hi", {
    role: "child",
    onEvent: (event) => {
      if (event.type === "text") events.onEvent(event);
      if (event.type === "usage") usageEvents++;
    },
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "after the flood", "the CLI's final result is the answer");
  assert.equal(result.truncated, true);
  // What is kept is the cap; the rest was read and dropped (RSS is too noisy to assert on).
  assert.equal(events.text.length, 1_000_000);
  assert.ok(usageEvents >= 1024, "the counters kept moving while text was dropped");
});

Deno.test("process: one endless line is skipped without buffering it; the result still counts", async () => {
  const agent = fakeAgent("claude", {
    modes: ["flood"],
    floodMb: 32,
    floodShape: "oneline",
    reply: "still here",
  });
  const result = await testRunner({ maxLineBytes: 1024 * 1024 })(agent, "hi", { role: "child" });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "still here");
  assert.equal(result.truncated, true);
});

Deno.test("process: a flood of plain text from a command agent is capped", async () => {
  const events = new EventLog();
  const agent = fakeAgent("command", { modes: ["flood"], floodMb: 16 });
  const result = await testRunner({ maxTextChars: 100_000 })(agent, "hi", {
    role: "child",
    onEvent: events.onEvent,
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text.length, 100_000);
  assert.equal(events.text, result.text);
  assert.equal(result.truncated, true);
});

Deno.test("process: a missing executable is a clear error, not an exception", async () => {
  const runner = testRunner();
  const events = new EventLog();
  const byPath = await runner(
    fakeAgent("claude", {}, { command: "/nonexistent/bin/claude" }),
    "hi",
    { role: "child", onEvent: events.onEvent },
  );
  assert.equal(byPath.ok, false);
  assert.equal(byPath.error, "fake-claude: executable not found: /nonexistent/bin/claude");
  assert.equal(byPath.exitCode, null);
  assert.deepEqual(events.events.map((e) => e.type), ["finished"]);

  const byName = await runner(
    fakeAgent("codex", {}, { command: "council-gateway-no-such-cli" }),
    "hi",
    { role: "child" },
  );
  assert.equal(byName.error, "fake-codex: executable not found: council-gateway-no-such-cli");
});

Deno.test("process: a missing working directory is named as such", async () => {
  const result = await testRunner()(fakeAgent("claude"), "hi", {
    role: "child",
    cwd: "/nonexistent/council/dir",
  });
  assert.equal(result.error, "fake-claude: working directory not found: /nonexistent/council/dir");
});

Deno.test("process: with a wind-down taker, a run returns on the child's answer; the group ends after", async () => {
  await using dirScope = await tempDir();
  const sigtermFile = `${dirScope.path}/sigterm`;
  const events = new EventLog();
  const windDowns: Promise<void>[] = [];
  // Lingers after its answer and ignores SIGTERM: its group is over only at the SIGKILL.
  const agent = fakeAgent("claude", {
    modes: ["linger", "ignore-sigterm"],
    reply: "the answer",
    sigtermFile,
  });
  const result = await testRunner({ killGraceMs: 3000 })(agent, "hi", {
    role: "child",
    onWindDown: (ended) => windDowns.push(ended),
    onEvent: events.onEvent,
  });
  assert.equal(result.ok, true, result.error);
  assert.equal(result.text, "the answer");
  assert.equal(windDowns.length, 1);
  if (onLinux) assert.ok(!isGone(events.pid!), "returned while the child still runs");
  await windDowns[0];
  if (onLinux) assert.ok(isGone(events.pid!), "gone once the wind-down settles");
  assert.equal(await Deno.readTextFile(sigtermFile), "SIGTERM\n", "ended on its answer");
});
