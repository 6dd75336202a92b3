/**
 * `council-gateway statusline`: Claude Code's stdin JSON in, one short line out — the session's
 * live council, its totals when idle, and a short line when the gateway is down or refuses the
 * token, and any agent cooling down. `connect claude` prints the settings.json snippet that runs it.
 * `status` prints the agents' health the same document tells.
 */
import assert from "node:assert/strict";
import { type CliIo, runCli } from "../../src/cli/mod.ts";
import {
  coolingPart,
  renderStatus,
  sessionIdOf,
  shortDuration,
  shortUsd,
} from "../../src/cli/statusline/line.ts";
import { clockTime, healthLines } from "../../src/cli/health_text.ts";
import type { StatusView } from "../../src/daemon/gateway_client.ts";
import { startServer } from "../../src/server/wiring.ts";
import { configOf } from "../support/test_config.ts";
import { byAgent, fakeAgents, gate } from "../support/scripted_agents.ts";
import { envOf, tempDir, writeFile } from "../support/temp_scripts.ts";
import { eventually, within } from "../support/wait.ts";

/** The shape Claude Code 2.1.330 writes to a statusLine command (our own values). */
function claudeCodeStdin(sessionId: string): string {
  return JSON.stringify({
    session_id: sessionId,
    transcript_path: `/home/dev/.claude/projects/-work-app/${sessionId}.jsonl`,
    cwd: "/work/app",
    effort: { level: "medium" },
    model: { id: "claude-opus-5-5", display_name: "Opus 5.5" },
    workspace: { current_dir: "/work/app", project_dir: "/work/app", added_dirs: [] },
    version: "2.1.330",
    output_style: { name: "default" },
    cost: {
      total_cost_usd: 0,
      total_duration_ms: 4200,
      total_api_duration_ms: 0,
      total_lines_added: 0,
      total_lines_removed: 0,
    },
    context_window: {
      total_input_tokens: 0,
      total_output_tokens: 0,
      context_window_size: 1000000,
      current_usage: null,
      used_percentage: null,
      remaining_percentage: null,
    },
    exceeds_200k_tokens: false,
    fast_mode: false,
    thinking: { enabled: true },
  });
}

async function statusline(
  stdin: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    env: envOf({ PATH: "", ...env }),
    cwd: "/nonexistent-dir-for-tests",
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stdin: () => Promise.resolve(stdin),
  };
  const code = await runCli(["statusline"], io);
  return { code, stdout, stderr };
}

Deno.test("statusline: Claude Code's stdin JSON gives the session id; anything else gives none", () => {
  assert.equal(sessionIdOf(claudeCodeStdin("9c90ae19-0469")), "9c90ae19-0469");
  assert.equal(sessionIdOf(""), undefined);
  assert.equal(sessionIdOf("not json"), undefined);
  assert.equal(sessionIdOf('{"session_id": 7}'), undefined);
});

Deno.test("statusline: short durations and amounts", () => {
  assert.deepEqual([0, 8_400, 71_000, 3_720_000].map(shortDuration), [
    "0s",
    "8s",
    "1m11s",
    "1h02m",
  ]);
  assert.deepEqual([0, 0.004, 0.04, 1.5].map(shortUsd), ["$0.00", "<$0.01", "$0.04", "$1.50"]);
});

const call = (label: string, state: string, elapsedMs: number, role = "child") => ({
  label,
  agent: label.split(" ")[0],
  role,
  state,
  elapsedMs,
  costUsd: 0,
});

function view(overrides: Partial<StatusView>): StatusView {
  return {
    version: "1",
    uptimeMs: 1,
    configPath: null,
    live: [],
    spend: { usd: 0, turns: 0 },
    ...overrides,
  };
}

Deno.test("statusline: a live turn as the issue shows it; deciding, synthesis, idle and ready", () => {
  const turn = {
    turn: "t1",
    session: "k",
    decision: { kind: "fanout", reason: "r" },
    elapsedMs: 12_000,
    usd: 0.01,
    calls: [
      call("judge", "done", 900, "judge"),
      call("claude", "done", 8_200),
      call("codex", "running", 11_900),
      call("gemini", "failed", 300),
    ],
  };
  const live = view({ session: { turns: 3, usd: 0.04, live: turn, last: null } });
  assert.equal(renderStatus(live), "council · claude ✓ 8s · codex … 11s · gemini ✗ · $0.04");
  const deciding = {
    ...turn,
    decision: undefined,
    calls: [call("judge", "running", 2_000, "judge")],
  };
  assert.equal(
    renderStatus(view({ session: { turns: 1, usd: 0, live: deciding, last: null } })),
    "council · deciding… 12s · judge … 2s · $0.00",
  );
  const synth = {
    ...turn,
    calls: [...turn.calls, call("claude (synth)", "running", 3_000, "synth")],
  };
  assert.match(
    renderStatus(view({ session: { turns: 1, usd: 0.02, live: synth, last: null } })),
    /gemini ✗ · synth … 3s · \$0\.02$/,
  );
  const last = { ...turn, wallMs: 20_000 };
  assert.equal(
    renderStatus(view({ session: { turns: 3, usd: 0.12, live: null, last } })),
    "council · idle · 3 turns · $0.12",
  );
  assert.equal(renderStatus(view({ session: null })), "council · ready");
  assert.equal(
    renderStatus(view({ session: null, live: [turn] })),
    "council · ready · 1 running elsewhere",
    "a session that ran no turn yet does not show another session's council",
  );
  assert.equal(
    renderStatus(view({ live: [turn] })),
    "council · claude ✓ 8s · codex … 11s · gemini ✗ · $0.01",
    "no session asked for: the newest live turn",
  );
});

const health = (state: string, coolingLeftMs: number | null = null) => ({
  state,
  failuresInRow: state === "healthy" ? 0 : 2,
  lastError: state === "healthy" ? null : "exit 1",
  coolingUntil: coolingLeftMs === null ? null : "2026-11-24T10:00:00.000Z",
  coolingLeftMs,
});

Deno.test("statusline: agents cooling down are appended with their time left, only when some are", () => {
  const idle = { turns: 2, usd: 0.05, live: null, last: null };
  const agents = [
    { agent: "claude", health: health("healthy") },
    { agent: "codex", health: health("cooling-down", 40_200) },
    { agent: "gemini", health: health("failing") },
  ];
  assert.equal(
    renderStatus(view({ session: idle, agents })),
    "council · idle · 2 turns · $0.05 · codex cooling down 41s",
  );
  assert.equal(
    renderStatus(view({
      session: null,
      agents: [...agents, { agent: "grok", health: health("cooling-down", 3_000) }],
    })),
    "council · ready · codex cooling down 41s, grok 3s",
  );
  const none = agents.map((a) => ({ ...a, health: health("healthy") }));
  assert.equal(
    renderStatus(view({ session: idle, agents: none })),
    "council · idle · 2 turns · $0.05",
  );
  assert.equal(
    renderStatus(view({ session: idle, agents: [{ agent: "codex" }] })),
    "council · idle · 2 turns · $0.05",
    "a gateway that tells no health",
  );
  assert.equal(
    coolingPart([{ agent: "codex", health: health("cooling-down", 200) }]),
    "codex cooling down 1s",
  );
});

Deno.test("status command: every agent's state, then why and until when for each one not healthy", () => {
  const agents = [
    { agent: "claude", health: health("healthy") },
    { agent: "codex", health: health("cooling-down", 61_000) },
    { agent: "gemini", health: { ...health("failing"), failuresInRow: 1 } },
    { agent: "grok", health: { ...health("healthy"), missesInRow: 3 } },
  ];
  assert.deepEqual(healthLines(agents), [
    "  agents:     claude ok, codex cooling down 1m01s, gemini failing, grok slow",
    `    codex: cooling down 1m01s (until ${
      clockTime("2026-11-24T10:00:00.000Z")
    }) after 2 failed calls in a row: exit 1`,
    "    gemini: failing: 1 failed call in a row: exit 1",
    "    grok: slow: its grace missed 3 turns in a row (no failure)",
  ]);
  assert.deepEqual(healthLines([{ agent: "claude" }]), [], "a gateway that tells no health");
  assert.equal(clockTime(new Date(2026, 0, 2, 3, 4, 5).toISOString()), "03:04:05", "local time");
});

Deno.test("statusline: against a gateway running a turn, from Claude Code's stdin JSON", async () => {
  const release = gate();
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "a", usage: { costUsd: 0.03 } },
    "codex:child": { gate: release.promise, text: "b" },
    "*:synth": { text: "c" },
  }));
  const token = "statusline-T0ken";
  const config = configOf({
    port: 0,
    token,
    fanOutPolicy: "always",
    defaultAgents: [{ runner: "claude", model: "opus" }, { runner: "codex", model: "gpt-5.5" }],
  });
  const server = startServer(config, { runAgent: fake.runAgent });
  await using dir = await tempDir();
  const env = {
    SVC_GATEWAY_PORT: String(server.addr.port),
    SVC_GATEWAY_TOKEN: token,
    XDG_STATE_HOME: dir.path,
  };
  try {
    assert.equal((await statusline(claudeCodeStdin("cc-1"), env)).stdout, "council · ready\n");
    const reply = fetch(`${server.origin}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": token,
        "x-claude-code-session-id": "cc-1",
      },
      body: JSON.stringify({
        model: "claude-opus-5-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "why?" }],
      }),
    });
    await within(
      eventually(() => server.status.live()[0]?.calls.some((c) => c.state === "done"), "claude"),
      "claude done",
    );
    const live = await statusline(claudeCodeStdin("cc-1"), env);
    assert.equal(live.code, 0);
    assert.match(live.stdout, /^council · claude ✓ 1s · codex … \d+s · \$0\.03\n$/);
    assert.equal(
      (await statusline(claudeCodeStdin("cc-2"), env)).stdout,
      "council · ready · 1 running elsewhere\n",
      "another Claude Code session",
    );
    const asClaudeCodeHasIt = await statusline(claudeCodeStdin("cc-1"), {
      ...env,
      SVC_GATEWAY_TOKEN: "",
      ANTHROPIC_BASE_URL: server.origin,
      ANTHROPIC_AUTH_TOKEN: token,
    });
    assert.match(
      asClaudeCodeHasIt.stdout,
      /^council · claude ✓/,
      "the token Claude Code presents to this same gateway",
    );
    const elsewhere = await statusline(claudeCodeStdin("cc-1"), {
      ...env,
      SVC_GATEWAY_TOKEN: "",
      ANTHROPIC_BASE_URL: "https://api.example.com",
      ANTHROPIC_AUTH_TOKEN: token,
    });
    assert.match(
      elsewhere.stdout,
      /refused the token/,
      "a token Claude Code sends elsewhere is not presented here",
    );
    const wrong = await statusline(claudeCodeStdin("cc-1"), { ...env, SVC_GATEWAY_TOKEN: "nope" });
    assert.equal(wrong.stdout, "council · gateway refused the token (SVC_GATEWAY_TOKEN)\n");
    release.open();
    await (await reply).body?.cancel();
  } finally {
    release.open();
    await server.shutdown();
  }
  const down = await statusline(claudeCodeStdin("cc-1"), env);
  assert.equal(down.code, 0, "a failing command would blank Claude Code's line");
  assert.equal(down.stdout, `council · gateway down (127.0.0.1:${server.addr.port})\n`);
  const invalid = await statusline("", { ...env, SVC_LOG_LEVEL: "loud" });
  assert.match(invalid.stdout, /^council · config error: /);
});

Deno.test("connect claude: the status line settings snippet, also as comments of the exports", async () => {
  await using dir = await tempDir();
  const config = await writeFile(dir.path, "c.yaml", "port: 7001\n");
  let stdout = "";
  const io: CliIo = {
    env: envOf({ PATH: "" }),
    cwd: dir.path,
    stdout: (t) => (stdout += t),
    stderr: () => {},
  };
  assert.equal(await runCli(["connect", "claude", "--settings", "--config", config], io), 0);
  const settings = JSON.parse(stdout);
  assert.deepEqual(Object.keys(settings), ["statusLine"]);
  assert.equal(settings.statusLine.type, "command");
  assert.equal(settings.statusLine.refreshInterval, 1, "re-run every second while a turn runs");
  assert.match(settings.statusLine.command, / statusline --config \S*c\.yaml$/);
  stdout = "";
  assert.equal(await runCli(["connect", "claude", "--config", config], io), 0);
  assert.match(stdout, /^export ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:7001$/m);
  assert.match(stdout, /^# {3}"statusLine": \{"type":"command","command":".* statusline /m);
  stdout = "";
  assert.equal(await runCli(["connect", "codex", "--settings"], io), 2);
});

Deno.test("statusline: a compaction turn says so before its one call", () => {
  const turn = {
    turn: "t2",
    session: "k",
    decision: { kind: "single", reason: "compaction (x-claude-code-compaction: auto): one agent" },
    elapsedMs: 4_000,
    usd: 0,
    calls: [call("claude", "running", 4_000)],
  };
  const live = view({ session: { turns: 2, usd: 0.01, live: turn, last: null } });
  assert.equal(renderStatus(live), "council · compaction · claude … 4s · $0.01");
  const starting = { ...turn, calls: [] };
  assert.equal(
    renderStatus(view({ session: { turns: 2, usd: 0, live: starting, last: null } })),
    "council · compaction · single · starting · $0.00",
  );
});
