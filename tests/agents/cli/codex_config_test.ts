import assert from "node:assert/strict";
import { codexProviderIsGateway } from "../../../src/agents/cli/codex_config.ts";
import { codexToml } from "../../../src/cli/connect.ts";
import { tempDir } from "../../support/agent_runner.ts";

const SELF = ["http://127.0.0.1:6767", "http://localhost:6767", "http://[::1]:6767"];

async function withConfig(toml: string | undefined, env: Record<string, string> = {}) {
  await using home = await tempDir("council-codex-config-");
  await Deno.mkdir(`${home.path}/.codex`);
  if (toml !== undefined) await Deno.writeTextFile(`${home.path}/.codex/config.toml`, toml);
  return await codexProviderIsGateway({ HOME: home.path, ...env }, SELF);
}

Deno.test("codex config: the default provider written by `connect codex` is the gateway", async () => {
  const toml = codexToml({ host: "127.0.0.1", port: 6767, token: undefined, passApiKeys: false });
  assert.equal(await withConfig(toml), true);
  // Another port, another host: not this gateway.
  const other = codexToml({ host: "127.0.0.1", port: 7000, token: undefined, passApiKeys: false });
  assert.equal(await withConfig(other), false);
});

Deno.test("codex config: the user's own provider, none at all, or a broken file is not the gateway", async () => {
  const azure = [
    'model_provider = "azure"',
    "[model_providers.azure]",
    'base_url = "https://example.openai.azure.com/openai"',
  ].join("\n");
  assert.equal(await withConfig(azure), false);
  assert.equal(await withConfig(undefined), false);
  assert.equal(await withConfig('model = "gpt-5.5"\n'), false, "OpenAI's own provider");
  assert.equal(await withConfig("this is [not toml"), false);
});

Deno.test("codex config: a profile, openai_base_url and CODEX_HOME are followed", async () => {
  const profile = [
    'profile = "council"',
    "[profiles.council]",
    'model_provider = "gw"',
    "[model_providers.gw]",
    'base_url = "http://localhost:6767/v1"',
  ].join("\n");
  assert.equal(await withConfig(profile), true);
  assert.equal(await withConfig('openai_base_url = "http://[::1]:6767/v1"\n'), true);
  await using elsewhere = await tempDir("council-codex-home-");
  await Deno.writeTextFile(
    `${elsewhere.path}/config.toml`,
    'model_provider = "gw"\n[model_providers.gw]\nbase_url = "http://127.0.0.1:6767/v1"\n',
  );
  assert.equal(await withConfig(undefined, { CODEX_HOME: elsewhere.path }), true);
});
