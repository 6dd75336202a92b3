/**
 * Ctrl-C with a turn running: one keypress is one signal, so running turns get the 3 s grace;
 * a deliberate second press cancels them at once. Under `npx -y deno@2.9.6 task start` a
 * terminal's Ctrl-C (SIGINT to the whole foreground process group) also reaches the gateway a
 * second time, forwarded by `deno task`: that copy must not cut the grace short.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { findOnPath } from "../../src/base/executables.ts";
import { DEFAULT_GRACE_MS } from "../../src/server/wiring.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { isolatedEnv, ROOT, spawnGateway } from "../support/gateway_process.ts";
import { tempDir } from "../support/git_repos.ts";
import { eventually, within } from "../support/wait.ts";

const NPX = findOnPath("npx", (name) => Deno.env.get(name));
if (!NPX) console.log("\n*** ctrl_c_test: the npx test SKIPPED: no npx on PATH ***\n");

function slowCouncil() {
  return {
    fanOutPolicy: "always",
    defaultAgents: [
      fakeAgent("claude", { reply: "a" }, { name: "claude" }),
      fakeAgent("codex", { reply: "b", delayMs: 60_000 }, { name: "codex" }),
    ],
  };
}

function startTurn(origin: string): Promise<void> {
  return fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-opus-5-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "a long question" }],
    }),
  }).then((res) => res.body?.cancel()).catch(() => {});
}

/** Milliseconds between two log lines' timestamps. */
function gapMs(from: string, to: string): number {
  const at = (line: string) => Date.parse(line.slice(0, 24));
  return at(to) - at(from);
}

function shutdownLines(lines: string[]): { draining: string[]; cancelling: string[] } {
  return {
    draining: lines.filter((l) => l.includes("shutting down: no new connections")),
    cancelling: lines.filter((l) => l.includes("shutting down: cancelling in-flight turns")),
  };
}

Deno.test("Ctrl-C: a copy of the SIGINT just after it keeps the grace; a press a second later cancels", async () => {
  await using scratch = await tempDir("cg-ctrlc-");
  const dir = scratch.path;
  const gateway = await spawnGateway(dir, slowCouncil());
  try {
    const turn = startTurn(gateway.origin);
    await gateway.waitForLine(/claude: done/);
    gateway.kill("SIGINT");
    // The same keypress forwarded by a launcher lands just after the first was handled (sent
    // at once, the kernel would merge the two into one pending signal).
    await gateway.waitForLine(/no new connections/);
    gateway.kill("SIGINT");
    await gateway.waitForLine(/cancelling in-flight turns/);
    assert.equal(await within(gateway.exited, "exit"), 0);
    await turn;
    const { draining, cancelling } = shutdownLines(gateway.lines());
    assert.equal(draining.length, 1);
    assert.ok(
      gapMs(draining[0], cancelling[0]) >= DEFAULT_GRACE_MS - 50,
      `the grace held: ${draining[0]}\n${cancelling[0]}`,
    );
  } finally {
    gateway.kill("SIGKILL");
    await gateway.exited;
  }

  const again = await spawnGateway(dir, slowCouncil());
  try {
    const turn = startTurn(again.origin);
    await again.waitForLine(/claude: done/);
    again.kill("SIGINT");
    await again.waitForLine(/no new connections/);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // a person pressing again
    again.kill("SIGINT");
    assert.equal(await within(again.exited, "exit"), 0);
    await turn;
    const { draining, cancelling } = shutdownLines(again.lines());
    const gap = gapMs(draining[0], cancelling[0]);
    assert.ok(
      gap >= 900 && gap < DEFAULT_GRACE_MS - 500,
      `cancelled at the second press: ${gap} ms`,
    );
  } finally {
    again.kill("SIGKILL");
    await again.exited;
  }
});

Deno.test({
  name: "Ctrl-C under `npx -y deno@2.9.6 task start`: SIGINT to the process group keeps the grace",
  ignore: !NPX,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cg-ctrlc-npx-" });
    const config = join(dir, "gateway.yaml");
    await Deno.writeTextFile(config, YAML.stringify({ port: 0, ...slowCouncil() }));
    // A process group of its own, as a terminal's foreground job: npx → sh → deno task → deno.
    const child = new Deno.Command(NPX!, {
      args: ["-y", "deno@2.9.6", "task", "start", "--config", config],
      cwd: ROOT,
      clearEnv: true,
      env: isolatedEnv(dir, {}),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    let output = "";
    const reading = Promise.all([
      (async () => {
        for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) output += text;
      })(),
      new Response(child.stderr).text().then((text) => (output += text)),
    ]);
    try {
      // npx may first fetch Deno into this test's fresh home: the poll gets the same bound.
      const origin = await within(
        eventually(() => /listening on (http:\/\/\S+)/.exec(output)?.[1], "listening", 120_000),
        "the gateway under npx",
        120_000,
      );
      const turn = startTurn(origin);
      await within(eventually(() => output.includes("claude: done"), "claude done"), "turn");
      Deno.kill(-child.pid, "SIGINT"); // what one Ctrl-C in a terminal sends
      const status = await within(child.status, "npx to end", 30_000);
      await reading;
      await turn;
      const lines = output.split("\n");
      const { draining, cancelling } = shutdownLines(lines);
      assert.equal(draining.length, 1, output);
      assert.equal(cancelling.length, 1, output);
      assert.ok(
        gapMs(draining[0], cancelling[0]) >= DEFAULT_GRACE_MS - 50,
        `the grace held:\n${draining[0]}\n${cancelling[0]}`,
      );
      assert.ok(lines.some((l) => l.endsWith("INFO  stopped")), output);
      assert.ok(
        status.code === 0 || status.signal === "SIGINT",
        `npx ended: ${JSON.stringify(status)}`,
      );
    } finally {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* ended */ }
      await child.status;
      await reading.catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});

const TMUX = findOnPath("tmux", (name) => Deno.env.get(name));

/** How the gateway's output leaves it in the terminal: to the terminal, or to a log file. */
const OUTPUTS = [
  { label: "output on the terminal", redirect: false },
  // `deno task start > gateway.log 2>&1` (or `| tee`): closing the terminal must end it too,
  // or it keeps the port with no terminal left to stop it from.
  { label: "output to a log file", redirect: true },
];

for (const { label, redirect } of OUTPUTS) {
  Deno.test({
    name:
      `SIGHUP in a terminal (${label}): kill -HUP reloads; closing the terminal ends the gateway`,
    ignore: !TMUX,
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "cg-hup-" });
      const config = join(dir, "gateway.yaml");
      const logFile = join(dir, "gateway.log");
      await Deno.writeTextFile(config, YAML.stringify({ port: 0, ...slowCouncil() }));
      const socket = `cg-hup-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
      const tmux = (...args: string[]) =>
        new TextDecoder().decode(
          new Deno.Command(TMUX!, {
            args: ["-L", socket, ...args],
            stdout: "piped",
            stderr: "null",
          }).outputSync().stdout,
        );
      const env = Object.entries(isolatedEnv(dir, {})).map(([k, v]) => `${k}=${v}`);
      const serve = [
        "exec env -i",
        ...env.map((e) => `'${e}'`),
        Deno.execPath(),
        "run --config",
        join(ROOT, "deno.json"),
        "-A",
        join(ROOT, "main.ts"),
        "serve --config",
        config,
        ...(redirect ? [">", logFile, "2>&1"] : []),
      ].join(" ");
      const output = () => {
        if (!redirect) return tmux("capture-pane", "-p", "-J");
        try {
          return Deno.readTextFileSync(logFile);
        } catch {
          return "";
        }
      };
      try {
        tmux("new-session", "-d", "-x", "250", "-y", "50", serve);
        const pid = Number(tmux("display-message", "-p", "#{pane_pid}").trim());
        await within(
          eventually(() => output().includes("listening on"), "listening"),
          "start",
          60_000,
        );
        Deno.kill(pid, "SIGHUP");
        await within(
          eventually(
            () => output().includes("config reload (SIGHUP): " + config + " is unchanged"),
            "x",
          ),
          "the reload",
        );
        tmux("kill-server"); // the terminal goes away: a hangup
        await within(
          eventually(() => {
            try {
              Deno.kill(pid, "SIGCONT");
              return false;
            } catch {
              return true; // gone
            }
          }, "the gateway to end"),
          "the gateway to end after the hangup",
          20_000,
        );
      } finally {
        tmux("kill-server");
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
