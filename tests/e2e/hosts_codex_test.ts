/**
 * The real Codex against the real gateway on the paths a plain `codex exec` does not take: a
 * provider allowing the WebSocket transport (one upgrade, answered 426, then HTTP at once) and
 * a provider whose command auth makes Codex ask for the model list (decoded: the council is in
 * Codex's model cache).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CODEX_PROVIDER_ID } from "../../src/cli/connect.ts";
import { fakeAgent } from "../fixtures/fakes.ts";
import { spawnGateway } from "../support/gateway_process.ts";
import { tempDir } from "../support/git_repos.ts";
import { codex, codexEnv, runCodex } from "./hosts.ts";

const PROVIDER_TABLE = `[model_providers.${CODEX_PROVIDER_ID}]`;

/** Rewrites the provider table `connect codex --toml` wrote into CODEX_HOME/config.toml. */
async function editProvider(
  env: Record<string, string>,
  edit: (lines: string[]) => string[],
): Promise<void> {
  const path = join(env.CODEX_HOME, "config.toml");
  const lines = (await Deno.readTextFile(path)).split("\n");
  const start = lines.indexOf(PROVIDER_TABLE);
  assert.ok(start >= 0, `no ${PROVIDER_TABLE} in:\n${lines.join("\n")}`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith("["));
  const table = lines.slice(start, end < 0 ? undefined : end);
  const rest = end < 0 ? [] : lines.slice(end);
  await Deno.writeTextFile(path, [...lines.slice(0, start), ...edit(table), ...rest].join("\n"));
}

async function project(dir: string): Promise<string> {
  const path = join(dir, "project");
  await Deno.mkdir(path);
  return path;
}

Deno.test({
  name: "codex: with supports_websockets, its one upgrade gets 426 and the turn goes over HTTP",
  ignore: !codex.path,
  async fn() {
    await using scratch = await tempDir("e2e-codex-ws-");
    const dir = scratch.path;
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      defaultAgents: [fakeAgent("claude", { reply: "over http" })],
    });
    try {
      const env = await codexEnv(dir, gateway.port);
      await editProvider(env, (table) => [...table, "supports_websockets = true"]);
      const started = performance.now();
      const out = await runCodex(await project(dir), env, "hello");
      const seconds = (performance.now() - started) / 1000;
      assert.equal(out.code, 0, `codex failed:\n${out.stdout}\n${out.stderr}`);
      assert.deepEqual(
        out.items.filter((i) => i.type === "agent_message").map((i) => i.text),
        ["over http"],
      );
      const upgrades = gateway.lines().filter((l) => /GET \/v1\/responses\b/.test(l));
      assert.equal(upgrades.length, 1, `one upgrade attempt:\n${gateway.lines().join("\n")}`);
      assert.match(upgrades[0], /\b426\b/);
      assert.ok(!out.stdout.includes("Reconnecting"), out.stdout);
      console.log(`codex with supports_websockets: 1 upgrade, answered in ${seconds.toFixed(1)} s`);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});

Deno.test({
  name: "codex: a provider that asks for the model list decodes the gateway's (council cached)",
  ignore: !codex.path,
  async fn() {
    await using scratch = await tempDir("e2e-codex-models-");
    const dir = scratch.path;
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "never",
      logLevel: "debug",
      defaultAgents: [fakeAgent("claude", { reply: "listed" })],
    });
    try {
      const env = await codexEnv(dir, gateway.port);
      const token = Object.entries(env).find(([name]) => name.startsWith("COUNCIL"))?.[1] ??
        "any-token";
      // Command auth is what makes Codex refresh its model list from the provider.
      await editProvider(env, (table) => [
        ...table.filter((line) => !line.startsWith("env_key")),
        `[model_providers.${CODEX_PROVIDER_ID}.auth]`,
        'command = "printf"',
        `args = [${JSON.stringify(token)}]`,
      ]);
      const out = await runCodex(await project(dir), env, "hello");
      assert.equal(out.code, 0, `codex failed:\n${out.stdout}\n${out.stderr}`);
      const asked = gateway.lines().filter((l) => /GET \/v1\/models\b/.test(l));
      assert.ok(asked.length > 0, `no model list request:\n${gateway.lines().join("\n")}`);
      assert.ok(asked.every((l) => /\b200\b/.test(l)), asked.join("\n"));
      // Codex writes its cache only after the list decoded.
      const cache = JSON.parse(await Deno.readTextFile(join(env.CODEX_HOME, "models_cache.json")));
      const slugs: string[] = JSON.stringify(cache).match(/"slug":"[^"]+"/g) ?? [];
      assert.ok(slugs.includes('"slug":"svc-council"'), slugs.join(", "));
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  },
});
