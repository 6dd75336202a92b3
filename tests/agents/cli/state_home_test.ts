import assert from "node:assert/strict";
import { join } from "node:path";
import { throwawayHome } from "../../../src/agents/cli/state_home.ts";
import { fakeAgent } from "../../fixtures/fakes.ts";
import { tempDir, testRunner } from "../../support/agent_runner.ts";

const SPEC = { variable: "TOOL_HOME", dir: ".tool", unlinked: ["tmp", "projects.json"] };

Deno.test("state home: links the user's files but not the history entries; removed afterwards", async () => {
  await using user = await tempDir("council-user-home-");
  const own = join(user.path, ".tool");
  await Deno.mkdir(join(own, "tmp", "chats"), { recursive: true });
  await Deno.writeTextFile(join(own, "oauth_creds.json"), '{"token":"t"}');
  await Deno.writeTextFile(join(own, "projects.json"), "{}");
  const home = await throwawayHome(SPEC, { HOME: user.path });
  const copy = join(home.path, ".tool");
  assert.deepEqual([...Deno.readDirSync(copy)].map((e) => e.name), ["oauth_creds.json"]);
  assert.equal(await Deno.readTextFile(join(copy, "oauth_creds.json")), '{"token":"t"}');
  // What the CLI records lands in the throwaway folder, never in the user's.
  await Deno.mkdir(join(copy, "tmp"));
  await Deno.writeTextFile(join(copy, "tmp", "chat.jsonl"), "{}");
  assert.deepEqual([...Deno.readDirSync(join(own, "tmp", "chats"))], []);
  await home.remove();
  assert.throws(() => Deno.statSync(home.path), Deno.errors.NotFound);
  assert.ok(Deno.statSync(join(own, "oauth_creds.json")).isFile, "the user's file stays");
});

Deno.test("state home: the CLI's own home variable is the source; a user without a folder is fine", async () => {
  await using user = await tempDir("council-user-home-");
  await Deno.mkdir(join(user.path, "alt", ".tool"), { recursive: true });
  await Deno.writeTextFile(join(user.path, "alt", ".tool", "settings.json"), "{}");
  const home = await throwawayHome(SPEC, {
    HOME: "/nonexistent",
    TOOL_HOME: join(user.path, "alt"),
  });
  assert.deepEqual([...Deno.readDirSync(join(home.path, ".tool"))].map((e) => e.name), [
    "settings.json",
  ]);
  await home.remove();
  const empty = await throwawayHome(SPEC, { HOME: join(user.path, "nobody") });
  assert.deepEqual([...Deno.readDirSync(join(empty.path, ".tool"))], []);
  await empty.remove();
});

Deno.test("state home: a gemini child runs with GEMINI_CLI_HOME set to a throwaway home, gone after the run", async () => {
  await using user = await tempDir("council-user-home-");
  const agent = fakeAgent("gemini", { modes: ["dump-env"] }, { env: { HOME: user.path } });
  const result = await testRunner()(agent, "hi", { role: "child" });
  assert.equal(result.ok, true, result.error);
  const env = JSON.parse(result.text);
  assert.equal(env.HOME, user.path, "HOME itself is left alone");
  assert.ok(env.GEMINI_CLI_HOME?.includes("council-home-"), env.GEMINI_CLI_HOME);
  assert.throws(() => Deno.statSync(env.GEMINI_CLI_HOME), Deno.errors.NotFound);
});

Deno.test("state home: a run gets the last run's path back when it is free, a concurrent run another", async () => {
  // A name of this test's own, so parallel tests do not share slots.
  const spec = { ...SPEC, dir: `.tool-${crypto.randomUUID().slice(0, 8)}` };
  const first = await throwawayHome(spec, { HOME: "/nonexistent" });
  await first.remove();
  const again = await throwawayHome(spec, { HOME: "/nonexistent" });
  assert.equal(again.path, first.path, "a CLI that names its home in its prompt keeps that prompt");
  const beside = await throwawayHome(spec, { HOME: "/nonexistent" });
  assert.notEqual(beside.path, again.path);
  const info = Deno.lstatSync(join(again.path, ".."));
  assert.ok(info.isDirectory && !info.isSymlink);
  if (Deno.build.os !== "windows") assert.equal((info.mode ?? 0) & 0o077, 0, "private to the user");
  await again.remove();
  await beside.remove();
  assert.throws(() => Deno.statSync(beside.path), Deno.errors.NotFound);
});
