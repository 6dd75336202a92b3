/**
 * Agent health wherever the gateway reports status: the status document's `agents[].health`
 * (state, failures in a row, last error masked, cool-down end and time left), the event stream
 * ticking while an agent cools down, and, against a running gateway whose gemini keeps failing,
 * the API, `status`, `doctor` and the status line. Time comes from an injected clock.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { runCli } from "../../src/cli/mod.ts";
import { statusCommand } from "../../src/cli/daemon_commands.ts";
import { runDoctor } from "../../src/cli/doctor.ts";
import { clockTime, healthDetail } from "../../src/cli/health_text.ts";
import { FakeClock } from "../support/fake_clock.ts";
import { daemonPaths } from "../../src/daemon/paths.ts";
import { secrets } from "../../src/base/redact.ts";
import { startServer } from "../../src/server/wiring.ts";
import { MAX_LAST_ERROR } from "../../src/status/agent_health.ts";
import { EVENTS_TICK_MS, mountStatusRoutes } from "../../src/status/routes.ts";
import { StatusStore } from "../../src/status/store.ts";
import type { AgentHealthReading, StatusDocument } from "../../src/status/types.ts";
import { configOf } from "../support/test_config.ts";
import { byAgent, fakeAgents } from "../support/scripted_agents.ts";
import { envOf, tempDir } from "../support/temp_scripts.ts";
import { within } from "../support/wait.ts";

const INFO = { version: "1", startedAt: 0, configPath: null };
const healthOf = (doc: StatusDocument, agent: string) =>
  doc.agents.find((a) => a.agent === agent)?.health;

Deno.test("status document: each agent's health — healthy, failing, cooling down with its end and time left", () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  store.knowAgents(["claude", "codex", "gemini"]);
  assert.deepEqual(healthOf(store.document(INFO), "codex"), {
    state: "healthy",
    failuresInRow: 0,
    missesInRow: 0,
    lastError: null,
    coolingUntil: null,
    coolingLeftMs: null,
    probation: false,
  }, "no health source yet: healthy");

  const until = clock.now() + 60_000;
  const readings: AgentHealthReading[] = [
    { agent: "claude", state: "healthy", failuresInRow: 0, missesInRow: 2 },
    { agent: "codex", state: "failing", failuresInRow: 1, lastError: "codex: exit 1\n(auth)" },
    {
      agent: "gemini",
      state: "cooling-down",
      failuresInRow: 2,
      lastError: "gemini: exit 1: 503 UNAVAILABLE",
      coolingUntil: until,
    },
    { agent: "judge", state: "failing", failuresInRow: 1, lastError: "x".repeat(1000) },
  ];
  store.readHealthFrom(() => readings);
  const doc = store.document(INFO);
  assert.equal(healthOf(doc, "claude")?.state, "healthy", "slow is not failing");
  assert.equal(healthOf(doc, "claude")?.missesInRow, 2);
  assert.deepEqual(healthOf(doc, "codex"), {
    state: "failing",
    failuresInRow: 1,
    missesInRow: 0,
    lastError: "codex: exit 1 (auth)",
    coolingUntil: null,
    coolingLeftMs: null,
    probation: false,
  });
  assert.deepEqual(healthOf(doc, "gemini"), {
    state: "cooling-down",
    failuresInRow: 2,
    missesInRow: 0,
    lastError: "gemini: exit 1: 503 UNAVAILABLE",
    coolingUntil: new Date(until).toISOString(),
    coolingLeftMs: 60_000,
    probation: false,
  });
  assert.equal(healthOf(doc, "judge")?.lastError?.length, MAX_LAST_ERROR, "an agent only failing");
  assert.equal(store.moving(), true, "the time left moves");

  clock.advance(41_500);
  assert.equal(healthOf(store.document(INFO), "gemini")?.coolingLeftMs, 18_500);
  clock.advance(18_500);
  const over = healthOf(store.document(INFO), "gemini");
  assert.equal(over?.state, "failing", "a cool-down that ran out is over, even on a stale reading");
  assert.equal(over?.coolingLeftMs, null);
  assert.equal(store.moving(), false);
});

Deno.test("status API: the event stream ticks while an agent cools down, and once more as it ends", async () => {
  const clock = new FakeClock();
  const store = new StatusStore(clock);
  const coolingUntil = clock.now() + 3000;
  store.readHealthFrom(() => [
    { agent: "codex", state: "cooling-down", failuresInRow: 2, coolingUntil },
  ]);
  const app = new Hono();
  mountStatusRoutes(app, { store, info: () => INFO, authOn: () => false, clock });
  const res = await app.request("/v1/council/events");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const frames: StatusDocument[] = [];
  let buffer = "";
  const framesUpTo = async (count: number) => {
    while (frames.length < count) {
      buffer += (await reader.read()).value ?? "";
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        frames.push(JSON.parse(/^data: (.*)$/m.exec(buffer.slice(0, end))![1]));
        buffer = buffer.slice(end + 2);
      }
    }
  };
  await within(framesUpTo(1), "the first frame");
  for (let second = 1; second <= 3; second++) {
    clock.advance(EVENTS_TICK_MS); // nothing happens but time
    await within(framesUpTo(1 + second), `the frame of second ${second}`);
  }
  await reader.cancel();
  const codex = frames.map((doc) => healthOf(doc, "codex"));
  assert.deepEqual(codex.map((h) => h?.coolingLeftMs), [3000, 2000, 1000, null]);
  assert.equal(codex.at(-1)?.state, "failing", "the frame where the cool-down has ended");
});

const SECRET = "sk-upstream-key-in-an-error-0123";

/** A gateway on an injected clock whose gemini fails: one failure starts a one-minute cool-down. */
function failingGemini() {
  const clock = new FakeClock();
  secrets.add(SECRET);
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "claude answers" },
    "codex:child": { text: "codex answers" },
    "gemini:child": { ok: false, error: `gemini: exit 1: 503 UNAVAILABLE (key ${SECRET})` },
    "claude:synth": { text: "the council's answer" },
  }));
  const config = configOf({
    port: 0,
    fanOutPolicy: "always",
    health: { failures: 1, cooldownMs: 60_000 },
    defaultAgents: [
      { runner: "claude", model: "opus" },
      { runner: "codex", model: "gpt-5.5" },
      { runner: "gemini", model: "gemini-2.5-pro" },
    ],
  });
  const server = startServer(config, { runAgent: fake.runAgent, clock });
  const ask = async () => {
    const res = await fetch(`${server.origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-opus-5-5",
        max_tokens: 100,
        messages: [{ role: "user", content: "Why does the build fail on CI?" }],
      }),
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  };
  return { clock, server, config: { ...config, port: server.addr.port }, ask };
}

Deno.test("agent health on a running gateway: the status API, `status`, `doctor` and the status line", async () => {
  const { clock, server, config, ask } = failingGemini();
  await using dir = await tempDir();
  try {
    await within(ask(), "the turn where gemini fails");
    const until = new Date(clock.now() + 60_000).toISOString();
    clock.advance(19_000);

    const res = await fetch(`${server.origin}/v1/council/status`);
    const text = await res.text();
    assert.ok(!text.includes(SECRET), "the last error goes through the redaction");
    const doc = JSON.parse(text) as StatusDocument;
    assert.deepEqual(healthOf(doc, "gemini"), {
      state: "cooling-down",
      failuresInRow: 1,
      missesInRow: 0,
      lastError: "gemini: exit 1: 503 UNAVAILABLE (key ***)",
      coolingUntil: until,
      coolingLeftMs: 41_000,
      probation: false,
    });
    assert.equal(healthOf(doc, "claude")?.state, "healthy");

    let stdout = "";
    const code = await statusCommand({
      config,
      paths: daemonPaths(envOf({ XDG_STATE_HOME: dir.path })),
      serveArgs: [],
      cwd: dir.path,
      stdout: (t) => (stdout += t),
      stderr: () => {},
    });
    assert.equal(code, 0);
    assert.match(stdout, /^ {2}agents: +claude ok, codex ok, gemini cooling down 41s$/m);
    assert.ok(
      stdout.includes(
        `\n    gemini: cooling down 41s (until ${clockTime(until)}) after 1 failed call in a ` +
          "row: gemini: exit 1: 503 UNAVAILABLE (key ***)\n",
      ),
      stdout,
    );

    const doctor = await runDoctor(config, envOf({ PATH: "" }));
    assert.match(doctor.text, /^AGENT +HEALTH ON THE RUNNING GATEWAY/m);
    assert.match(doctor.text, /^claude +ok$/m);
    assert.match(doctor.text, /^gemini +cooling down 41s \(until [\d:]+\) after 1 failed call/m);
    assert.ok(
      doctor.problems.some((p) => /^gemini: cooling down 41s .*skips it until then\)$/.test(p)),
      doctor.problems.join("\n"),
    );

    let line = "";
    await runCli(["statusline"], {
      env: envOf({ PATH: "", SVC_GATEWAY_PORT: String(config.port), XDG_STATE_HOME: dir.path }),
      cwd: dir.path,
      stdout: (t) => (line += t),
      stderr: () => {},
      stdin: () => Promise.resolve(""),
    });
    assert.equal(line, "council · ready · gemini cooling down 41s\n");
  } finally {
    await server.shutdown();
  }
});

Deno.test("status document: an agent on probation says so, and the commands say what it means", () => {
  const store = new StatusStore(new FakeClock());
  store.knowAgents(["gemini"]);
  const lastError = "gemini: unanswered within the longest grace (3.0s) 2 turns in a row";
  store.readHealthFrom(() => [
    { agent: "gemini", state: "failing", failuresInRow: 1, lastError, probation: true },
  ]);
  const health = healthOf(store.document(INFO), "gemini")!;
  assert.equal(health.probation, true);
  assert.equal(health.state, "failing");
  assert.equal(
    healthDetail(health),
    `failing (on probation: not waited for past the quorum): 1 failed call in a row: ${lastError}`,
  );
});
