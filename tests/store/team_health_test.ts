/** Agent health shared through the store: a cool-down one replica starts, the others take over. */
import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import type { AgentHealthStatus } from "../../src/council/calls/health.ts";
import { connectStore } from "../../src/store/open_store.ts";
import { Team } from "../../src/store/team.ts";
import { FakeClock } from "../support/fake_clock.ts";
import { freshDatabase, ignoreWithoutPostgres } from "../support/postgres.ts";

Deno.test({
  name: "team: an agent cooling down on one replica is skipped by the others too",
  ignore: ignoreWithoutPostgres(),
  async fn() {
    await using db = await freshDatabase();
    const clock = new FakeClock(Date.now());
    const log = getLogger(["council-gateway", "test"]);
    const [a, b] = await Promise.all(
      ["a", "b"].map(async (id) =>
        new Team(await connectStore(db.url, { replicaId: id }), { url: db.url, log, clock })
      ),
    );
    try {
      const cooling: AgentHealthStatus = {
        agent: "codex",
        state: "cooling-down",
        failuresInRow: 3,
        lastError: "codex: upstream 529",
        coolingUntil: clock.now() + 60_000,
      };
      const takenOver: AgentHealthStatus[] = [];
      a.shareHealth(() => [cooling], () => {});
      b.shareHealth(
        () => [{ agent: "codex", state: "healthy", failuresInRow: 0 }],
        (status) => takenOver.push(status),
      );
      await b.beat();
      await a.beat();
      await b.beat();
      const adopted = takenOver.find((status) => status.state === "cooling-down");
      assert.equal(adopted?.coolingUntil, cooling.coolingUntil);
      assert.equal(adopted?.lastError, cooling.lastError);
      const status = await b.status();
      assert.deepEqual(status.health.map((record) => record.replica), ["a"]);
      assert.equal(status.totals.replicas, 2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  },
});
