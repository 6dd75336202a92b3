/**
 * The load driver's no-cross-talk check, small and fast: 20 concurrent streaming turns over
 * both protocols on the real server with `sh` fakes; each answer must name only its own turn's
 * marker, none may fail, and no child may be left running. (The 50-turn burst and the 1,000
 * turn soak are the bench's `load` scenario.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type AgentEntry, nameAgents, parseConfigObject } from "../../src/config/mod.ts";
import { startServer } from "../../src/server/wiring.ts";
import { tempDir } from "../support/git_repos.ts";
import {
  concurrentTurns,
  crossTalk,
  FAKE_PATH,
  leftoverFakes,
  loadConfig,
  type LoadTurn,
} from "../support/marker_turns.ts";

Deno.test("cross-talk: the load driver's checks catch a foreign marker and a missing synthesis", () => {
  const turn = (answer: string): LoadTurn => ({
    protocol: "messages",
    marker: "LOAD-MARK-x1",
    status: 200,
    answer,
    wallMs: 1,
  });
  assert.equal(crossTalk(turn("answer: LOAD-MARK-x1 LOAD-MARK-x1 LOAD-MARK-x1")), undefined);
  assert.match(
    crossTalk(turn("answer: LOAD-MARK-x1 LOAD-MARK-y2 LOAD-MARK-x1")) ?? "",
    /heard of LOAD-MARK-y2/,
  );
  assert.match(crossTalk(turn("candidate: LOAD-MARK-x1")) ?? "", /not a synthesis/);
});

Deno.test({
  name: "cross-talk: 20 concurrent streaming turns over both protocols, each with its own answer",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    // Removed when the test ends, after the server's shutdown has ended every child.
    await using scratch = await tempDir("cg-crosstalk-");
    const dir = scratch.path;
    // A private copy of the fake, so the process table shows this test's children only.
    const fake = join(dir, "echo-marker.sh");
    await Deno.copyFile(FAKE_PATH, fake);
    await Deno.chmod(fake, 0o755);
    const file = { port: 0, ...loadConfig(50, 20, fake) };
    const parsed = parseConfigObject(file);
    const agents = nameAgents(parsed.defaultAgents as AgentEntry[]);
    const server = startServer(
      { ...parsed, configPath: null, defaultAgents: agents, councilSize: 3 },
      { graceMs: 0 },
    );
    try {
      const turns = await concurrentTurns(server.origin, "ct", 20);
      assert.deepEqual(turns.map((t) => t.error).filter(Boolean), []);
      assert.deepEqual(turns.map(crossTalk).filter(Boolean), []);
      assert.deepEqual(new Set(turns.map((t) => t.protocol)), new Set(["messages", "responses"]));
      assert.equal(new Set(turns.map((t) => t.marker)).size, 20);
    } finally {
      await server.shutdown();
    }
    assert.deepEqual(await leftoverFakes(fake), []);
  },
});
