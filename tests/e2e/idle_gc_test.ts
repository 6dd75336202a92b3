/**
 * The gateway as `deno task start` runs it (so as the binary does: the compile flags are the
 * start task's, see tests/distribution/permissions_test.ts) has V8's collector exposed, and
 * collects its heap once idle after a turn.
 */
import assert from "node:assert/strict";
import { spawnGateway } from "./gateway.ts";

Deno.test("e2e idle collection: with the start task's flags the heap is collected after a turn", async () => {
  const dir = await Deno.makeTempDir({ prefix: "council-e2e-idle-gc-" });
  const gateway = await spawnGateway(dir, {
    logLevel: "debug",
    defaultAgents: [{ runner: "command", model: "fake-model", command: "cat" }],
  });
  // A bound, not a timing: the collection comes a second after the turn, or never.
  const deadline = setTimeout(() => gateway.kill("SIGKILL"), 30_000);
  try {
    await gateway.waitForLine(/idle collection on/);
    const response = await fetch(`${gateway.origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "svc-council",
        max_tokens: 50,
        messages: [{ role: "user", content: "hello" }],
      }),
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
    await gateway.waitForLine(/idle: heap collected in [\d.]+ ms, [\d.]+ → [\d.]+ MB/);
  } finally {
    clearTimeout(deadline);
    await gateway.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
