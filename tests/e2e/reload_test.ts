/**
 * Hot reload in a real gateway process: a valid edit of the configuration file made while a turn
 * runs applies from the next turn (the running one keeps its configuration) and is logged with
 * what changed; an invalid edit keeps the running configuration and logs the exact error;
 * SIGHUP reads the file again.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { fakeAgent } from "../fixtures/fakes.ts";
import { spawnGateway } from "../support/gateway_process.ts";
import { tempDir } from "../support/git_repos.ts";
import { eventually, within } from "../support/wait.ts";

function council(reply: string) {
  return {
    fanOutPolicy: "always",
    defaultAgents: [
      fakeAgent("claude", { reply }, { name: "claude", model: "opus" }),
      fakeAgent("codex", { reply: "codex draft", delayMs: 1500 }, { name: "codex" }),
    ],
  };
}

async function ask(origin: string, text: string): Promise<string> {
  const res = await fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-opus-5-5",
      max_tokens: 100,
      messages: [{ role: "user", content: text }],
    }),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  return body.content.map((block: { text?: string }) => block.text ?? "").join("");
}

Deno.test("reload: edits during a running turn — valid applies from the next turn, invalid is refused; SIGHUP", async () => {
  await using scratch = await tempDir("cg-reload-");
  const dir = scratch.path;
  const gateway = await spawnGateway(dir, council("answer of the first config"));
  const file = join(dir, "gateway.yaml");
  /** The `n`th log line matching `pattern` (1-based), once there is one. */
  const nth = (pattern: RegExp, n: number) =>
    within(
      eventually(() => gateway.lines().filter((line) => pattern.test(line))[n - 1], `${pattern}`),
      `line ${n} matching ${pattern}`,
      20_000,
    );
  try {
    // A valid edit while a turn runs: that turn finishes on the configuration it started with.
    const running = ask(gateway.origin, "first question");
    running.catch(() => {}); // awaited below; a failure before that must not go unhandled
    await gateway.waitForLine(/consulting 2 agents/);
    await Deno.writeTextFile(file, YAML.stringify({ port: 0, ...council("answer of the edit") }));
    const reloaded = await nth(/config reloaded from/, 1);
    assert.match(
      reloaded,
      new RegExp(
        `INFO  config reloaded from ${file} \\(file change\\), from the next turn: ` +
          "defaultAgents claude:opus,codex:gpt-5.5 \\(settings of an agent changed\\)$",
      ),
    );
    assert.equal(await running, "answer of the first config", "the running turn kept its config");
    assert.equal(await ask(gateway.origin, "second question"), "answer of the edit");

    // An invalid edit while a turn runs: refused with the loader's own message; nothing changes.
    const third = ask(gateway.origin, "third question");
    third.catch(() => {});
    await nth(/consulting 2 agents/, 3);
    await Deno.writeTextFile(
      file,
      YAML.stringify({ port: 0, ...council("never served"), fanOutPolicy: "sometimes" }),
    );
    const refused = await nth(/config reload \(file change\) of .* failed/, 1);
    assert.match(
      refused,
      new RegExp(
        `ERROR config reload \\(file change\\) of ${file} failed, the running configuration ` +
          'stays: config: fanOutPolicy: "sometimes" is not one of always, auto, necessary, never$',
      ),
    );
    assert.equal(await third, "answer of the edit");
    assert.equal(await ask(gateway.origin, "fourth question"), "answer of the edit");

    // SIGHUP reads the file again (still invalid: refused the same way, with its reason).
    gateway.kill("SIGHUP");
    const hup = await nth(/config reload \(SIGHUP\)/, 1);
    assert.match(hup, /failed, the running configuration stays: config: .*fanOutPolicy/);
    await Deno.writeTextFile(file, YAML.stringify({ port: 0, ...council("after SIGHUP") }));
    await nth(/config reloaded from/, 2);
    assert.equal(await ask(gateway.origin, "fifth question"), "after SIGHUP");
    assert.equal(await gateway.stop(), 0);
  } catch (err) {
    console.log(`gateway log:\n${gateway.lines().join("\n")}`);
    throw err;
  } finally {
    gateway.kill("SIGKILL");
    await gateway.exited;
  }
});
