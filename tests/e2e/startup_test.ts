/**
 * What the gateway says when it starts: the start line names the configuration file or says
 * "defaults"; a configured agent command that is not installed is a warning at start and an
 * error in `doctor`; `doctor` counts a running council gateway on the port as fine.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDoctor } from "../../src/cli/doctor.ts";
import { startServer } from "../../src/server/wiring.ts";
import { configOf } from "../support/test_config.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { isolatedEnv, ROOT, spawnGateway } from "../support/gateway_process.ts";
import { fakeAgents } from "../support/scripted_agents.ts";

Deno.test("startup: the start line names the config file; a missing agent command is a warning", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cg-startup-" });
  const gateway = await spawnGateway(dir, {
    defaultAgents: [
      fakeAgent("claude", {}, { name: "claude" }),
      { name: "ghost", runner: "codex", model: "gpt-5.5", command: "/nope/codex" },
    ],
  });
  try {
    const [listening] = gateway.lines();
    assert.match(
      listening,
      new RegExp(
        `agents=claude:claude-opus-4-8,ghost:gpt-5\\.5 config=${join(dir, "gateway.yaml")}$`,
      ),
    );
    const warning = await gateway.waitForLine(/agent ghost/);
    assert.match(
      warning,
      /WARN {2}agent ghost: command \/nope\/codex not found; its calls will fail until it is installed \(council-gateway doctor\)$/,
    );
    assert.equal(gateway.lines().filter((l) => l.includes("not found;")).length, 1, "only ghost");
    assert.equal(await gateway.stop(), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startup: without a config file the start line says defaults", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cg-startup-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "main.ts"), "serve"],
    cwd: dir,
    clearEnv: true,
    env: isolatedEnv(dir, { PATH: "", SVC_GATEWAY_PORT: "0" }),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    assert.match(text.split("\n")[0], /listening on .* agents=none config=defaults$/);
    reader.releaseLock();
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("doctor: a running council gateway on the port is fine; a missing agent command is an error", async () => {
  const server = startServer(
    configOf({ port: 0, defaultAgents: [{ runner: "claude", model: "m" }] }),
    {
      runAgent: fakeAgents(() => ({ text: "x" })).runAgent,
    },
  );
  try {
    const config = configOf({
      port: server.addr.port,
      defaultAgents: [{ name: "ghost", runner: "codex", model: "gpt-5.5", command: "/nope/codex" }],
    });
    const report = await runDoctor(config, () => undefined);
    assert.match(
      report.text,
      new RegExp(
        `bind address +127\\.0\\.0\\.1:${server.addr.port} \\(in use by a running council-gateway 0\\.1\\.0\\) +ok`,
      ),
    );
    assert.deepEqual(report.problems, ["ghost: not found: /nope/codex"]);
  } finally {
    await server.shutdown();
  }
});
