/**
 * The dashboard's Team section in headless Chromium: with a shared database, every replica with
 * its live turns, the totals, and each person key's spend against its budget.
 */
import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { startServer } from "../../src/server/wiring.ts";
import { startTeam } from "../../src/store/team.ts";
import { configOf } from "../support/test_config.ts";
import { fakeAgents } from "../support/scripted_agents.ts";
import { freshDatabase, ignoreWithoutPostgres } from "../support/postgres.ts";
import { CHROMIUM, launchChromium } from "./chromium.ts";

Deno.test({
  name: "dashboard in Chromium: the Team section lists the replicas and each key's spend",
  ignore: !CHROMIUM || ignoreWithoutPostgres(),
  async fn() {
    await using db = await freshDatabase();
    const team = await startTeam({ url: db.url, log: getLogger(["council-gateway", "test"]) });
    await team.store.keys.create({ name: "alice", maxUsd: 50, period: "month" });
    const config = configOf({ port: 0, defaultAgents: [{ runner: "claude", model: "opus" }] });
    const server = startServer(config, {
      runAgent: fakeAgents(() => ({ text: "x" })).runAgent,
      team,
    });
    await using browser = await launchChromium();
    try {
      const page = await browser.open(`${server.origin}/`);
      await page.waitFor(`!document.getElementById("team-section").hidden`, "the Team section");
      const text = await page.evaluate<string>(`document.getElementById("team").textContent`);
      assert.match(text, /1 replicas, 0 live turns/);
      assert.match(text, new RegExp(`${Deno.hostname()} \\(pid ${Deno.pid}\\)`));
      assert.match(text, /alice\$0\.0000 of \$50\.0000per monthlive/);
    } finally {
      await server.shutdown();
    }
  },
});
