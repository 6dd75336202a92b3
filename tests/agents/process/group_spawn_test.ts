/**
 * The two ways a child gets its own process group — setsid(1) in front of it (Linux) and Deno's
 * `detached` (elsewhere) — behave the same: pid = pgid = the executable's own pid, the group is
 * ended with its grandchildren, executables resolve as Deno resolves them, and a child that
 * cannot start gets the same clear error.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  chooseGroupSpawn,
  type GroupSpawn,
  machineGroupSpawn,
} from "../../../src/agents/process/group_spawn.ts";
import { fakeAgent } from "../../fixtures/fakes.ts";
import {
  cleanBaseEnv,
  EventLog,
  isGone,
  readPids,
  tempDir,
  testRunner,
} from "../../support/agent_runner.ts";

const onLinux = Deno.build.os === "linux";
const setsid = chooseGroupSpawn();
/** Every way this machine has: setsid(1) (Linux) and the detached fallback. */
const MODES: GroupSpawn[] = [...(setsid.via === "setsid" ? [setsid] : []), { via: "detached" }];

async function writeScript(path: string, body: string, mode = 0o755): Promise<string> {
  await Deno.writeTextFile(path, body);
  await Deno.chmod(path, mode);
  return path;
}

Deno.test("chooseGroupSpawn: setsid on Linux from PATH, else its usual places, else detached", async () => {
  await using dirScope = await tempDir();
  const dir = dirScope.path;
  const setsid = await writeScript(join(dir, "setsid"), "#!/bin/sh\n");
  const elsewhere = join(dir, "nothing-here");
  assert.deepEqual(
    chooseGroupSpawn({ os: "linux", path: `${elsewhere}:${dir}`, places: [] }),
    { via: "setsid", setsid },
  );
  assert.deepEqual(
    chooseGroupSpawn({ os: "linux", path: elsewhere, places: [setsid] }),
    { via: "setsid", setsid },
  );
  assert.deepEqual(chooseGroupSpawn({ os: "linux", path: elsewhere, places: [] }), {
    via: "detached",
  });
  assert.deepEqual(chooseGroupSpawn({ os: "darwin", path: dir, places: [setsid] }), {
    via: "detached",
  });
  await Deno.chmod(setsid, 0o644);
  assert.deepEqual(chooseGroupSpawn({ os: "linux", path: dir, places: [] }), { via: "detached" });
});

Deno.test({
  name: "this Linux machine has setsid(1), and children spawn through it",
  ignore: !onLinux,
  fn() {
    assert.equal(setsid.via, "setsid", "setsid(1) (util-linux) is missing on this machine");
    assert.deepEqual(machineGroupSpawn(), setsid);
  },
});

for (const groupSpawn of MODES) {
  const via = groupSpawn.via;

  Deno.test({
    name: `${via}: the reported pid is the executable's own, leading its own group and session`,
    ignore: !onLinux,
    async fn() {
      const events = new EventLog();
      const agent = fakeAgent("command", {}, {
        command: "sh",
        args: ["-c", "cat /proc/$$/stat"],
      });
      const result = await testRunner({ groupSpawn })(agent, "hi", {
        role: "child",
        onEvent: events.onEvent,
      });
      assert.equal(result.ok, true, result.error);
      const stat = result.text;
      const [pid] = stat.split(" ");
      const [_state, _ppid, pgid, sid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      assert.equal(Number(pid), events.pid, "the started event names the executable's pid");
      assert.equal(Number(pgid), events.pid, "pgid = pid");
      assert.equal(Number(sid), events.pid, "its own session");
    },
  });

  Deno.test({
    name: `${via}: abort ends the child's grandchildren with its group`,
    ignore: !onLinux,
    async fn() {
      await using dirScope = await tempDir();
      const pidFile = `${dirScope.path}/pids`;
      const controller = new AbortController();
      const events = new EventLog();
      const agent = fakeAgent("gemini", {
        modes: ["grandchildren", "hang"],
        pidFile,
        grandchildStdio: "ignore",
      });
      const result = await testRunner({ groupSpawn })(agent, "hi", {
        role: "child",
        signal: controller.signal,
        onEvent: (event) => {
          events.onEvent(event);
          if (event.type === "text") controller.abort();
        },
      });
      assert.equal(result.aborted, true);
      const pids = await readPids(pidFile);
      assert.ok(pids.length > 0, "the fake started grandchildren");
      for (const pid of [events.pid!, ...pids]) assert.ok(isGone(pid), `${pid} still runs`);
    },
  });

  Deno.test({
    name: `${via}: abort the moment the child is reported started still ends it`,
    ignore: !onLinux,
    async fn() {
      // With setsid(1) the group may not exist yet at this point (setsid(2) not yet called).
      for (let i = 0; i < 5; i++) {
        const controller = new AbortController();
        const events = new EventLog();
        const result = await testRunner({ groupSpawn })(
          fakeAgent("claude", { modes: ["hang"] }),
          "hi",
          {
            role: "child",
            signal: controller.signal,
            onEvent: (event) => {
              events.onEvent(event);
              if (event.type === "started") controller.abort();
            },
          },
        );
        assert.equal(result.aborted, true);
        assert.ok(isGone(events.pid!), `${events.pid} still runs`);
      }
    },
  });

  Deno.test(`${via}: a path with a slash is taken relative to the working directory`, async () => {
    await using dirScope = await tempDir();
    await writeScript(join(dirScope.path, "tool.sh"), "#!/bin/sh\necho relative\n");
    const agent = fakeAgent("command", {}, { command: "./tool.sh", args: [] });
    const result = await testRunner({ groupSpawn })(agent, "hi", {
      role: "child",
      cwd: dirScope.path,
    });
    assert.equal(result.ok, true, result.error);
    assert.equal(result.text, "relative\n");
  });

  Deno.test(`${via}: a bare name is found on the child's PATH`, async () => {
    await using dirScope = await tempDir();
    await writeScript(join(dirScope.path, "council-test-tool"), "#!/bin/sh\necho on-path\n");
    const baseEnv = cleanBaseEnv();
    baseEnv.PATH = `${dirScope.path}:${baseEnv.PATH}`;
    const agent = fakeAgent("command", {}, { command: "council-test-tool", args: [] });
    const result = await testRunner({ groupSpawn, baseEnv })(agent, "hi", { role: "child" });
    assert.equal(result.ok, true, result.error);
    assert.equal(result.text, "on-path\n");
  });

  Deno.test(`${via}: a script whose interpreter is missing is named as such`, async () => {
    await using dirScope = await tempDir();
    const script = await writeScript(
      join(dirScope.path, "orphan.sh"),
      "#!/nonexistent/interpreter\necho never\n",
    );
    const agent = fakeAgent("command", {}, { command: script, args: [] });
    const result = await testRunner({ groupSpawn })(agent, "hi", { role: "child" });
    assert.equal(result.ok, false);
    assert.equal(
      result.error,
      `fake-command: cannot start ${script}: its interpreter was not found`,
    );
  });

  Deno.test(`${via}: a file without an execute bit is a clear error`, async () => {
    await using dirScope = await tempDir();
    const script = await writeScript(join(dirScope.path, "plain.sh"), "echo never\n", 0o644);
    const agent = fakeAgent("command", {}, { command: script, args: [] });
    const result = await testRunner({ groupSpawn })(agent, "hi", { role: "child" });
    assert.equal(result.ok, false);
    assert.equal(result.error, `fake-command: cannot execute ${script}: permission denied`);
  });

  Deno.test(`${via}: a missing executable is "executable not found", never an exit code`, async () => {
    const events = new EventLog();
    const agent = fakeAgent("command", {}, { command: "council-gateway-no-such-tool", args: [] });
    const result = await testRunner({ groupSpawn })(agent, "hi", {
      role: "child",
      onEvent: events.onEvent,
    });
    assert.equal(result.error, "fake-command: executable not found: council-gateway-no-such-tool");
    assert.equal(result.exitCode, null);
    assert.deepEqual(events.events.map((e) => e.type), ["finished"]);
  });

  Deno.test(`${via}: a child's own exit 127 stays an exit code`, async () => {
    for (const line of ["setsid: failed to execute /elsewhere: No such file"]) {
      const agent = fakeAgent("command", {}, {
        command: "sh",
        args: ["-c", `echo '${line}' >&2; exit 127`],
      });
      const result = await testRunner({ groupSpawn })(agent, "hi", { role: "child" });
      assert.equal(result.exitCode, 127);
      assert.equal(result.error, `fake-command: exit code 127: ${line}`);
    }
  });
}

Deno.test("doctor: names how CLI children get their process group; not for HTTP-only councils", async () => {
  const { runDoctor } = await import("../../../src/cli/doctor.ts");
  const { nameAgents, parseConfigObject } = await import("../../../src/config/mod.ts");
  const configOf = (agents: Record<string, unknown>[]) => {
    const parsed = parseConfigObject({ port: 0, defaultAgents: agents });
    const named = nameAgents(parsed.defaultAgents ?? []);
    return { ...parsed, configPath: null, defaultAgents: named, councilSize: named.length };
  };
  const env = () => undefined;
  const cli = await runDoctor(
    configOf([{ runner: "command", model: "m", command: "/bin/true" }]),
    env,
  );
  const line = cli.text.split("\n").find((l) => l.startsWith("process groups"));
  const spawn = machineGroupSpawn();
  const expected = spawn.via === "setsid"
    ? `setsid(1) at ${spawn.setsid}`
    : "Deno's detached spawn";
  assert.ok(line?.includes(expected), `${expected} not in:\n${cli.text}`);
  const http = await runDoctor(
    configOf([{ runner: "openai", model: "m", baseUrl: "http://127.0.0.1:9" }]),
    env,
    200,
  );
  assert.doesNotMatch(http.text, /process groups/);
});
