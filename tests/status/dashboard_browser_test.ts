/**
 * The dashboard in headless Chromium against a real listening gateway whose council is a gated
 * fake: live turns with each child's progress, recent turns, the per-agent table and the spend
 * chart update live from the SSE stream; an agent cooling down is marked with why and until when;
 * with a token, the login form keeps the token out of every URL. A screenshot is taken while a
 * turn runs (kept when COUNCIL_SCREENSHOT_DIR is set).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../support/fake_clock.ts";
import { startServer } from "../../src/server/wiring.ts";
import { configOf } from "../support/test_config.ts";
import { byAgent, fakeAgents, gate } from "../support/scripted_agents.ts";
import { eventually, within } from "../support/wait.ts";
import { CHROMIUM, launchChromium } from "./chromium.ts";

if (!CHROMIUM) {
  console.log(
    "\n*** dashboard_browser_test SKIPPED: no chromium on PATH (apt-get install chromium) ***\n",
  );
}

const TOKEN = "dash-T0ken-kept-in-page";

function slowCouncil(token?: string) {
  const release = gate();
  const fake = fakeAgents(byAgent({
    "claude:child": { text: "claude answers", usage: { costUsd: 0.02 } },
    "codex:child": {
      gate: release.promise,
      text: "codex answers",
      early: ["thinking about it"],
      earlyUsage: { inputTokens: 900, outputTokens: 40 },
    },
    "gemini:child": { ok: false, error: "gemini: exit 41 (auth)" },
    "claude:synth": { text: "the council's answer", usage: { costUsd: 0.01 } },
  }));
  const config = configOf({
    port: 0,
    token,
    fanOutPolicy: "always",
    defaultAgents: [
      { runner: "claude", model: "opus" },
      { runner: "codex", model: "gpt-5.5" },
      { runner: "gemini", model: "gemini-2.5-pro" },
    ],
  });
  const server = startServer(config, { runAgent: fake.runAgent });
  const ask = () =>
    fetch(`${server.origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { "x-api-key": token } : {}) },
      body: JSON.stringify({
        model: "claude-opus-5-5",
        max_tokens: 100,
        messages: [{ role: "user", content: "Why does the build fail on CI?" }],
      }),
    });
  return { server, release, ask };
}

const stateOf = (label: string) =>
  `document.querySelector('#live tr[data-agent="${label}"] td[data-state]')?.dataset.state`;

/** Where a test's screenshots go: COUNCIL_SCREENSHOT_DIR (kept), else a temp dir removed after. */
async function screenshotDir(): Promise<{ pathOf(name: string): string } & AsyncDisposable> {
  const kept = Deno.env.get("COUNCIL_SCREENSHOT_DIR");
  const dir = kept ?? await Deno.makeTempDir({ prefix: "cg-screens-" });
  await Deno.mkdir(dir, { recursive: true });
  return {
    pathOf: (name) => join(dir, name),
    [Symbol.asyncDispose]: async () => {
      if (!kept) await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test({
  name: "dashboard in Chromium: a running turn's children, then recent turns, agents and spend",
  ignore: !CHROMIUM,
  async fn() {
    const { server, release, ask } = slowCouncil();
    await using screenshots = await screenshotDir();
    await using browser = await launchChromium();
    try {
      const reply = ask();
      await within(
        eventually(() => server.status.live()[0]?.calls.length === 3, "three children"),
        "the turn to start",
      );
      const page = await browser.open(`${server.origin}/`);
      await page.waitFor(`${stateOf("codex")} === "running"`, "codex running");
      await page.waitFor(`${stateOf("claude")} === "done"`, "claude done");
      assert.equal(await page.evaluate(stateOf("gemini")), "failed");
      assert.equal(await page.evaluate(`document.getElementById("login").hidden`), true);
      const head = await page.evaluate<string>(
        `document.querySelector("#live .turn .head").textContent`,
      );
      assert.match(head, /fanout — fanOutPolicy always/);
      const codexRow = await page.evaluate<string>(
        `document.querySelector('#live tr[data-agent="codex"]').textContent`,
      );
      assert.match(codexRow, /940/, "codex's reported tokens so far");
      assert.equal(
        await page.evaluate(`document.querySelectorAll('#agents tr[data-agent]').length`),
        3,
        "every configured agent in the table",
      );
      assert.equal(
        await page.evaluate(`document.getElementById("connection").textContent`),
        "live",
      );
      const shot = screenshots.pathOf("dashboard-live-turn.png");
      await page.screenshot(shot);
      assert.ok((await Deno.stat(shot)).size > 10_000, "a real screenshot");

      // The elapsed time moves without any event from the children (the stream ticks).
      const elapsed = () =>
        page.evaluate<string>(
          `document.querySelector('#live tr[data-agent="codex"] td.num').textContent`,
        );
      const first = await elapsed();
      await page.waitFor(
        `document.querySelector('#live tr[data-agent="codex"] td.num').textContent !== ${
          JSON.stringify(first)
        }`,
        "codex's elapsed time to move",
      );

      release.open();
      assert.equal((await reply).status, 200);
      await page.waitFor(`document.querySelector("#live .empty")`, "no live turn");
      const turnId = server.status.document({ version: "", startedAt: 0, configPath: null })
        .recent[0].turn;
      await page.waitFor(`document.querySelector('#recent tr[data-turn="${turnId}"]')`, "recent");
      const recent = await page.evaluate<string>(
        `document.querySelector('#recent tr[data-turn="${turnId}"]').textContent`,
      );
      assert.match(recent, /fanout/);
      assert.match(recent, /claude \(synth\) ✓/);
      assert.match(recent, /\$0\.0500/, "claude $0.02; codex, gemini and the synthesis $0.01 each");
      const claudeRow = await page.evaluate<string>(
        `document.querySelector('#agents tr[data-agent="claude"]').textContent`,
      );
      assert.match(claudeRow, /^claude2/, "two claude calls: child and synthesis");
      assert.ok(
        await page.evaluate(`document.querySelectorAll("#spend svg rect.spend").length === 1`),
      );
      assert.match(
        await page.evaluate<string>(`document.querySelector("#spend p").textContent`),
        /\$0\.0500 over 1 turns/,
      );
      // Seats: each member's part in the council, as a table, a chart and one sentence each.
      await page.waitFor(`document.querySelector('#seats tr[data-agent="codex"]')`, "seats");
      const codexSeat = await page.evaluate<string[]>(
        `[...document.querySelectorAll('#seats tr[data-agent="codex"] td')].map((td) => td.textContent)`,
      );
      assert.equal(codexSeat[1], "1", "codex sat one turn");
      assert.ok(await page.evaluate(`document.querySelector("#seats svg") !== null`), "a chart");
      const sentences = await page.evaluate<string>(
        `document.querySelector("#seats ul").textContent`,
      );
      assert.match(sentences, /codex:/);
      await page.screenshot(screenshots.pathOf("dashboard-seats.png"));
    } finally {
      release.open();
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "dashboard in Chromium: with a token, a login form; the token never appears in a URL",
  ignore: !CHROMIUM,
  async fn() {
    const { server, release, ask } = slowCouncil(TOKEN);
    await using browser = await launchChromium();
    try {
      const page = await browser.open(`${server.origin}/`);
      await page.waitFor(`!document.getElementById("login").hidden`, "the login form");
      assert.equal(await page.evaluate(`document.getElementById("dashboard").hidden`), true);
      const submit = (value: string) =>
        page.evaluate(`(() => {
          document.getElementById("token").value = ${JSON.stringify(value)};
          document.getElementById("login").requestSubmit();
          return true;
        })()`);
      await submit("wrong-token");
      await page.waitFor(
        `document.getElementById("login-error").textContent.includes("refused")`,
        "the refusal",
      );
      const reply = ask();
      await submit(TOKEN);
      await page.waitFor(`${stateOf("codex")} === "running"`, "the live turn after login");
      assert.equal(await page.evaluate(`document.getElementById("login").hidden`), true);
      assert.equal(await page.evaluate(`document.getElementById("token").value`), "");
      assert.equal(await page.evaluate(`location.href`), `${server.origin}/`);
      const urls = page.requestedUrls();
      assert.ok(urls.some((url) => url.endsWith("/v1/council/events")), urls.join("\n"));
      for (const url of urls) assert.ok(!url.includes(TOKEN), `token in a URL: ${url}`);
      release.open();
      assert.equal((await reply).status, 200);
    } finally {
      release.open();
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "dashboard in Chromium: an agent cooling down is marked, with why and until when",
  ignore: !CHROMIUM,
  async fn() {
    const clock = new FakeClock();
    const fake = fakeAgents(byAgent({
      "claude:child": { text: "claude answers" },
      "gemini:child": { ok: false, error: "gemini: exit 1: 503 UNAVAILABLE" },
      "claude:synth": { text: "the council's answer" },
    }));
    const config = configOf({
      port: 0,
      fanOutPolicy: "always",
      health: { failures: 1, cooldownMs: 60_000 },
      defaultAgents: [
        { runner: "claude", model: "opus" },
        { runner: "gemini", model: "gemini-2.5-pro" },
      ],
    });
    const server = startServer(config, { runAgent: fake.runAgent, clock });
    await using screenshots = await screenshotDir();
    await using browser = await launchChromium();
    try {
      const reply = await fetch(`${server.origin}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude-opus-5-5",
          max_tokens: 100,
          messages: [{ role: "user", content: "Why does the build fail on CI?" }],
        }),
      });
      await reply.body?.cancel();
      const until = clock.now() + 60_000;
      const page = await browser.open(`${server.origin}/`);
      const row = (agent: string) => `document.querySelector('#agents tr[data-agent="${agent}"]')`;
      await page.waitFor(`${row("gemini")}?.dataset.health === "cooling-down"`, "gemini marked");
      assert.equal(await page.evaluate(`${row("claude")}.dataset.health`), "healthy");
      const untilText = await page.evaluate<string>(`new Date(${until}).toLocaleTimeString()`);
      const cell = () =>
        page.evaluate<string>(`${row("gemini")}.querySelector("td.health").textContent`);
      assert.equal(
        await cell(),
        `⊘ cooling down: skipped until ${untilText} (1m 00s left) after 1 failed call in a row: ` +
          "gemini: exit 1: 503 UNAVAILABLE",
      );
      assert.equal(
        await page.evaluate(`document.getElementById("health").textContent`),
        `gemini cooling down until ${untilText} (1m 00s left)`,
        "named in the header too",
      );
      const shot = screenshots.pathOf("dashboard-cooling-down.png");
      await page.screenshot(shot);

      clock.advance(20_000); // the stream ticks while an agent cools down
      await page.waitFor(`${row("gemini")}.textContent.includes("(40s left)")`, "time left moving");
      clock.advance(40_000);
      await page.waitFor(`${row("gemini")}?.dataset.health === "failing"`, "the cool-down over");
      assert.equal(await page.evaluate(`document.getElementById("health").textContent`), "");
    } finally {
      // The page's event stream stays open and the grace period runs on the fake clock: the
      // second call ends it at once.
      void server.shutdown();
      void server.shutdown();
      await server.finished;
    }
  },
});
