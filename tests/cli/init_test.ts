/**
 * `council-gateway init`: a commented starter configuration whose council is the agent CLIs
 * found on PATH, that loads as it is, whose commented defaults are the real defaults, and that
 * is not overwritten without --force.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { type CliIo, runCli } from "../../src/cli/mod.ts";
import { starterConfig } from "../../src/cli/init.ts";
import { ConfigSchema, loadConfig } from "../../src/config/mod.ts";
import { envOf, tempDir, writeScript } from "../support/temp_scripts.ts";

async function cli(argv: string[], env: Record<string, string>, cwd: string) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    env: envOf(env),
    cwd,
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

Deno.test("init: the CLIs found on PATH become the council; the file loads as written", async () => {
  await using dir = await tempDir();
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  await writeScript(bin, "claude", "exit 0");
  await writeScript(bin, "codex", "exit 0");
  const env = { PATH: bin, HOME: dir.path };
  const target = join(dir.path, "conf", "council.yaml");
  const first = await cli(["init", "--config", target], env, dir.path);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^wrote .*council\.yaml \(council: claude, codex\)/);
  const text = await Deno.readTextFile(target);
  assert.match(text, /^# council-gateway configuration, written by `council-gateway init`/);
  assert.match(text, /^# {2}- runner: gemini +# not found on PATH/m);
  const config = loadConfig({ configPath: target, env: envOf(env), cwd: dir.path });
  assert.deepEqual(config.defaultAgents.map((a) => [a.name, a.model]), [
    ["claude", "opus"],
    ["codex", "gpt-5.5"],
  ]);
  assert.equal(config.agentsSource, "config");

  const again = await cli(["init", "--config", target], env, dir.path);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already exists \(pass --force to replace it\)/);
  assert.equal(await Deno.readTextFile(target), text, "left as it was");
  assert.equal((await cli(["init", "--config", target, "--force"], env, dir.path)).code, 0);
});

Deno.test("init: an opencode on PATH joins the council with OpenCode's own model", () => {
  const text = starterConfig(
    (command) => command === "opencode" ? "/opt/bin/opencode" : null,
    "today",
  );
  assert.match(
    text,
    /^ {2}- runner: opencode\n {4}model: default\n {4}# command: \/opt\/bin\/opencode$/m,
  );
  assert.match(text, /^# {2}- runner: claude +# not found on PATH/m);
  const entries = YAML.parse(text).defaultAgents;
  assert.deepEqual(entries, [{ runner: "opencode", model: "default" }]);
});

Deno.test("init: without --config it writes the user-wide file serve looks up; --stdout only prints", async () => {
  await using dir = await tempDir();
  const env = { PATH: "", HOME: dir.path, XDG_CONFIG_HOME: join(dir.path, "xdg") };
  const printed = await cli(["init", "--stdout"], env, dir.path);
  assert.equal(printed.code, 0);
  assert.match(
    printed.stdout,
    /No agent CLI \(claude, codex, gemini, opencode\) was found on PATH/,
  );
  const written = await cli(["init"], env, dir.path);
  assert.equal(written.code, 0);
  const path = join(dir.path, "xdg", "council-gateway", "config.yaml");
  assert.match(written.stdout, new RegExp(`^wrote ${path} \\(council: none found on PATH\\)`));
  const config = loadConfig({ env: envOf(env), cwd: dir.path });
  assert.equal(config.configPath, path, "the file serve finds");
  assert.deepEqual(config.defaultAgents, []);
});

Deno.test("init: every commented setting shows its real default", () => {
  const text = starterConfig(() => null, "2026-11-24");
  const commented = text.split("\n")
    .map((line) => /^# ([a-zA-Z]+): (.*?)(\s+#.*)?$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null);
  assert.ok(commented.length >= 10, `settings shown: ${commented.length}`);
  const shown = YAML.parse(commented.map((m) => `${m[1]}: ${m[2]}`).join("\n"));
  const defaults = ConfigSchema.parse({}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(shown)) {
    if (key === "token") continue; // no default: shown empty
    assert.deepEqual(value, defaults[key], key);
  }
});
