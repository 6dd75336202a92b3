/**
 * The warm pool: on by default, started by a key's first run, children started ahead per (agent,
 * role, model, cwd), taken by the next run with that key, refilled once no pooled run is in
 * flight, bounded, reaped when idle and on shutdown
 * (a fake runner and a FakeClock); and with real processes: an idle child is ended, a primed CLI
 * that would quit on a silent stdin waits.
 */
import { promptText } from "../../src/agents/prompt_text.ts";
import assert from "node:assert/strict";
import { FakeClock } from "../support/fake_clock.ts";
import type { AgentConfig } from "../../src/config/mod.ts";
import { spawnChild } from "../../src/agents/process/child_process.ts";
import { machineGroupSpawn } from "../../src/agents/process/group_spawn.ts";
import type {
  AgentPrompt,
  AgentResult,
  AgentRunner,
  PreparedRun,
  PrepareOptions,
  RunOptions,
} from "../../src/agents/types.ts";
import { createWarmPool, poolKey, type WarmPool } from "../../src/agents/warm_pool.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { eventually } from "../support/wait.ts";
import { isGone, tempDir, testRunner } from "../support/agent_runner.ts";

function result(agent: string, text: string): AgentResult {
  return {
    agent,
    model: "m",
    role: "child",
    ok: true,
    text,
    exitCode: 0,
    timedOut: false,
    aborted: false,
    durationMs: 1,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, estimated: true },
  };
}

/** A runner that records cold runs and prepared children (each a plain object). */
function fakeRunner() {
  const cold: string[] = [];
  const prepared: { options: PrepareOptions; ran?: string; discarded: boolean; dead: boolean }[] =
    [];
  let release: (() => void) | undefined;
  const runner: AgentRunner = Object.assign(
    async (agent: AgentConfig, given: AgentPrompt, _options: RunOptions) => {
      const prompt = promptText(given);
      cold.push(prompt);
      if (prompt === "hold") await new Promise<void>((resolve) => (release = resolve));
      return result(agent.name, `cold: ${prompt}`);
    },
    {
      prepare: (agent: AgentConfig, options: PrepareOptions): Promise<PreparedRun> => {
        const record = {
          options,
          ran: undefined as string | undefined,
          discarded: false,
          dead: false,
        };
        prepared.push(record);
        return Promise.resolve({
          agent: agent.name,
          alive: () => !record.dead,
          run: (given: AgentPrompt) => {
            const prompt = promptText(given);
            record.ran = prompt;
            return Promise.resolve(result(agent.name, `warm: ${prompt}`));
          },
          discard: () => {
            record.discarded = true;
            return Promise.resolve();
          },
        });
      },
    },
  );
  return { runner, cold, prepared, release: () => release?.() };
}

const claude: AgentConfig = {
  name: "claude",
  runner: "claude",
  model: "opus",
  args: [],
  env: {},
  timeoutMs: 1000,
};
const settings = { size: 1, idleMs: 60_000, maxProcesses: 8 };
const child: RunOptions = { role: "child" };

/** A key's first run: cold, and a child started for it once the run is over. */
async function firstRun(pool: WarmPool, agent: AgentConfig, options: RunOptions) {
  const before = pool.ready;
  const first = await pool.runner(agent, "first sighting", options);
  assert.equal(first.text, "cold: first sighting");
  assert.equal(pool.ready, before + 1, "the key's first run starts its waiting child");
}

Deno.test("warm pool config: on by default, `off`, or settings", () => {
  const parse = (warmPool?: unknown) => ConfigSchema.parse({ warmPool }).warmPool;
  assert.deepEqual(parse(), { size: 1, idleMs: 300_000, maxProcesses: 8 });
  assert.deepEqual(parse("on"), parse());
  assert.equal(parse("off").size, 0);
  assert.deepEqual(parse({ idleMs: 1000 }), { size: 1, idleMs: 1000, maxProcesses: 8 });
  assert.throws(() => parse("sometimes"));
});

Deno.test("warm pool: a session's first request starts it; the next run takes the started child", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  assert.equal(pool.ready, 0, "nothing runs before a request");
  await firstRun(pool, claude, child);
  assert.equal(fake.prepared[0].options.holdStdin, true, "a pooled child is primed to wait");
  const second = await pool.runner(claude, "two", child);
  assert.equal(second.text, "warm: two");
  assert.deepEqual(fake.cold, ["first sighting"]);
  assert.equal(fake.prepared[0].ran, "two");
  assert.equal(pool.ready, 1, "refilled after the turn");
  assert.equal(fake.prepared.length, 2);
  await pool.shutdown();
});

Deno.test("warm pool: children are kept per agent, role, model and cwd; never in a turn's own copy", async () => {
  await using a = await tempDir();
  await using b = await tempDir();
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  for (const options of [child, { role: "synth" } as const, { ...child, cwd: a.path }]) {
    await firstRun(pool, claude, options);
  }
  assert.equal(pool.ready, 3);
  assert.equal(
    (await pool.runner(claude, "synth again", { role: "synth" })).text,
    "warm: synth again",
  );
  const copy = { role: "child", cwd: b.path, scratch: true } as const;
  assert.equal((await pool.runner(claude, "x", copy)).text, "cold: x");
  assert.equal((await pool.runner(claude, "y", copy)).text, "cold: y");
  assert.equal(pool.ready, 3, "a turn's copy of the workspace gets no waiting child");
  assert.ok(fake.prepared.every((p) => p.options.cwd !== b.path));
  assert.notEqual(poolKey(claude, child), poolKey(claude, { ...child, model: "haiku" }));
  await pool.shutdown();
});

Deno.test("warm pool: a child prepared ahead (the early synthesizer) is a ready one when there is one", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  const synth: RunOptions = { role: "synth", access: "read-only" };
  await firstRun(pool, claude, synth);
  const early = await pool.runner.prepare(claude, { role: "synth", access: "read-only" });
  assert.equal(pool.ready, 0, "the ready child was taken");
  assert.equal((await early.run("candidates")).text, "warm: candidates");
  assert.equal(pool.ready, 1, "refilled once it has run");
  // Another access is another key: a fresh child, not the pooled one.
  const other = await pool.runner.prepare(claude, { role: "synth", access: "workspace-write" });
  assert.equal(pool.ready, 1);
  assert.equal(fake.prepared.at(-1)?.options.access, "workspace-write");
  await other.discard();
  assert.notEqual(poolKey(claude, synth), poolKey(claude, { ...synth, access: "workspace-write" }));
  await pool.shutdown();
});

Deno.test("warm pool: no child is started to wait in a directory that is gone", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  const scratch = await Deno.makeTempDir();
  const run = pool.runner(claude, "hold", { role: "child", cwd: scratch });
  await Deno.remove(scratch);
  fake.release();
  await run;
  assert.equal(pool.ready, 0);
  assert.equal(fake.prepared.length, 0);
  await pool.shutdown();
});

Deno.test("warm pool: a kept copy of the workspace is refilled once it is clean, and served on the next turn", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  const slot = await Deno.makeTempDir();
  try {
    const cleaned = Promise.withResolvers<void>();
    const kept = { role: "child", cwd: slot, reusedAfter: cleaned.promise } as const;
    const first = await pool.runner(claude, "turn 1", kept);
    assert.equal(first.text, "cold: turn 1");
    assert.equal(pool.ready, 0, "no child waits in it while it holds the turn's changes");
    cleaned.resolve();
    await eventually(() => pool.ready === 1, "refilled once the copy is clean");
    assert.equal(fake.prepared[0].options.cwd, slot);
    const next = { role: "child", cwd: slot, reusedAfter: new Promise<void>(() => {}) } as const;
    assert.equal((await pool.runner(claude, "turn 2", next)).text, "warm: turn 2");
  } finally {
    await pool.shutdown();
    await Deno.remove(slot, { recursive: true });
  }
});

/** A pool with one child waiting in a directory of its own (removed at the end if still there). */
async function withWaitingChild(
  test: (fake: ReturnType<typeof fakeRunner>, pool: WarmPool, dir: string) => Promise<void>,
) {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  const dir = await Deno.makeTempDir();
  try {
    await firstRun(pool, claude, { role: "child", cwd: dir });
    await test(fake, pool, dir);
  } finally {
    await pool.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("warm pool: a child waiting in a directory removed and made again is not served", async () => {
  await withWaitingChild(async (fake, pool, dir) => {
    // The slot is reaped and made afresh at the same path: the waiting child's cwd is gone.
    await Deno.remove(dir);
    // Creation times have millisecond resolution (and the inode is often reused at once).
    await new Promise((resolve) => setTimeout(resolve, 5));
    await Deno.mkdir(dir);
    const run = await pool.runner(claude, "again", { role: "child", cwd: dir });
    assert.equal(run.text, "cold: again");
    assert.equal(fake.prepared[0].discarded, true, "the stale child is ended");
    assert.equal(
      (await pool.runner(claude, "then", { role: "child", cwd: dir })).text,
      "warm: then",
    );
  });
});

Deno.test("warm pool: children waiting in a removed directory are ended at the next refill", async () => {
  await withWaitingChild(async (fake, pool, dir) => {
    // The session's kept slot is removed (fewer children, another repository, broken).
    await Deno.remove(dir);
    await pool.runner(claude, "elsewhere", { role: "synth" });
    assert.equal(fake.prepared[0].discarded, true, "not left waiting until idleMs");
    assert.equal(pool.ready, 1, "only the synthesizer's child counts toward maxProcesses");
  });
});

Deno.test("warm pool: refills wait until no pooled run is in flight", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  const held = pool.runner(claude, "hold", child);
  await pool.runner(claude, "quick", { role: "synth" });
  assert.equal(fake.prepared.length, 0, "nothing started while a run is still going");
  fake.release();
  await held;
  assert.equal(fake.prepared.length, 2, "both keys refilled once the turn is over");
  await pool.shutdown();
});

Deno.test("warm pool: reaped after idleMs without a request, and started again by the next", async () => {
  const fake = fakeRunner();
  const clock = new FakeClock();
  const pool = createWarmPool(fake.runner, settings, clock);
  await firstRun(pool, claude, child);
  clock.advance(settings.idleMs - 1);
  assert.equal(pool.ready, 1);
  clock.advance(1);
  await Promise.resolve();
  assert.equal(pool.ready, 0);
  assert.equal(fake.prepared[0].discarded, true);
  clock.advance(settings.idleMs * 10);
  assert.equal(fake.prepared.length, 1, "nothing is started again while no request comes");
  assert.equal(clock.pending, 0, "no timer left: the idle pool costs nothing");
  await pool.runner(claude, "later", child);
  assert.deepEqual(fake.cold, ["first sighting", "later"], "cold after the reaping");
  assert.equal(pool.ready, 1, "the next request starts it again");
  await pool.shutdown();
});

Deno.test("warm pool: shutdown ends every ready child and refills nothing after", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  for (const options of [child, { role: "synth" } as const]) await firstRun(pool, claude, options);
  await pool.shutdown();
  assert.equal(pool.ready, 0);
  assert.ok(fake.prepared.every((p) => p.discarded || p.ran));
  await pool.runner(claude, "after", child);
  assert.equal(fake.prepared.length, 2, "no new child after shutdown");
});

Deno.test("warm pool: a child that died while waiting is dropped; the run goes cold", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  await firstRun(pool, claude, child);
  fake.prepared[0].dead = true;
  assert.equal((await pool.runner(claude, "two", child)).text, "cold: two");
  assert.equal(fake.prepared[0].discarded, true);
  await pool.shutdown();
});

Deno.test("warm pool: bounded by maxProcesses, the keys used last first; off at size 0, with attachments, for HTTP agents", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, { ...settings, maxProcesses: 2 }, new FakeClock());
  const cwds = ["/", "/tmp", Deno.cwd()];
  for (const cwd of cwds) await pool.runner(claude, cwd, { role: "child", cwd });
  assert.equal(pool.ready, 2);
  const waiting = fake.prepared.filter((p) => !p.discarded && !p.ran).map((p) => p.options.cwd);
  assert.deepEqual(new Set(waiting), new Set(cwds.slice(1)), "the directories used last");
  await pool.shutdown();

  const off = fakeRunner();
  const none = createWarmPool(off.runner, { ...settings, size: 0 }, new FakeClock());
  await none.runner(claude, "one", child);
  await none.runner(claude, "two", child);
  assert.equal(off.prepared.length, 0);

  const attached = fakeRunner();
  const images = createWarmPool(attached.runner, settings, new FakeClock());
  const image = { label: "image 1", kind: "image", mediaType: "image/png", data: "iVBORw0K" };
  const withImage = { ...child, attachments: [image] } as unknown as RunOptions;
  await images.runner(claude, "look", withImage);
  await images.runner(claude, "look again", withImage);
  assert.deepEqual(attached.cold, ["look", "look again"], "a turn with attachments starts cold");
  assert.equal(attached.prepared.length, 0);

  const http = fakeRunner();
  const api = createWarmPool(http.runner, settings, new FakeClock());
  await api.runner({ ...claude, runner: "anthropic" }, "one", child);
  assert.equal(http.prepared.length, 0);
});

Deno.test("warm pool: a command agent, which may act before it reads its prompt, is never started ahead", async () => {
  const fake = fakeRunner();
  const pool = createWarmPool(fake.runner, settings, new FakeClock());
  const script = { ...claude, name: "script", runner: "command" as const, command: "/bin/true" };
  await pool.runner(script, "one", child);
  await pool.runner(script, "two", child);
  await pool.runner.prepare(script, { role: "synth" }).then((p) => p.discard());
  assert.deepEqual(fake.cold, ["one", "two"]);
  assert.equal(fake.prepared.length, 1, "only the run prepared on request, none ahead");
  assert.equal(pool.ready, 0);
  await firstRun(pool, claude, child);
  await pool.shutdown();
});

Deno.test({
  name: "warm pool with real processes: the idle child is ended, and on shutdown too",
  ignore: Deno.build.os === "windows",
  async fn() {
    const clock = new FakeClock();
    const marker = `warm-pool-test-${crypto.randomUUID()}`;
    // The fake codex waits for its prompt on stdin; the marker names its processes.
    const agent = fakeAgent("codex", {}, { args: ["-c", `test_marker="${marker}"`] });
    const pool = createWarmPool(testRunner(), settings, clock);
    await pool.runner(agent, "first", child);
    assert.equal(pool.ready, 1);
    const idle = await eventually(async () => (await pidsRunning(marker))[0], "a started child");
    clock.advance(settings.idleMs);
    await eventually(() => isGone(idle) || undefined, `idle child ${idle} ended`);

    await pool.runner(agent, "second", child);
    const kept = await eventually(
      async () => (await pidsRunning(marker)).find((pid) => pid !== idle),
      "a new started child",
    );
    await pool.shutdown();
    assert.ok(isGone(kept), `child ${kept} still runs after shutdown`);
  },
});

/** Pids of live processes whose command line holds `marker`. */
async function pidsRunning(marker: string): Promise<number[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes(marker))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter((pid) => !isGone(pid));
}

Deno.test({
  name: "a primed child gets the primer at once, then its prompt after it",
  ignore: Deno.build.os === "windows",
  async fn() {
    const child = spawnChild({
      command: "bash",
      // Quits unless something arrives within 0.3 s (as claude and gemini do), else echoes all.
      args: ["-c", 'IFS= read -t 0.3 -r first || exit 7; printf "[%s]" "$first"; cat'],
      cwd: Deno.cwd(),
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      stdout: "text",
      maxLineBytes: 1024,
      killGraceMs: 500,
      groupSpawn: machineGroupSpawn(),
      stdinPrimer: "\n",
    });
    assert.ok(!("spawnError" in child));
    let out = "";
    child.read((piece) => (out += piece));
    await new Promise((resolve) => setTimeout(resolve, 600));
    child.deliver("the prompt");
    const end = await child.ended;
    assert.equal(end.exitCode, 0, "it did not quit on a silent stdin");
    assert.equal(out, "[]the prompt");
  },
});
