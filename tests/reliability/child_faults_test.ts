/**
 * Child faults through full turns on the real gateway (a subprocess, so its RSS can be read):
 * a child that crashes at start, exits non-zero mid-stream, prints invalid JSON lines, hangs
 * past its time-out, ignores SIGTERM, starts grandchildren, or floods 100 MB. Each turn still
 * completes with a clear outcome, memory stays bounded, and afterwards no process of the turn
 * is alive (checked in the process table).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  assertAllGone,
  FaultBox,
  rssKb,
  sampleRss,
  spawnGateway,
  type StreamedReply,
  streamTurn,
} from "../support/faulty_gateway.ts";
import { tempDir } from "../support/git_repos.ts";

/** Only the synthesizer's prompt holds the candidates. */
const SYNTH = "=== Candidate A ===";
const SYNTHESIZED = "The council's synthesized answer.";
/** Time-out of the agent that is made to hang (kept short: the test waits it out). */
const QUICK_TIMEOUT_MS = 4000;
/**
 * Growth of the gateway's RSS allowed while a child floods 100 MB. The runner keeps at most
 * 2 M characters per child, so growth is garbage awaiting collection (measured 20–55 MB, and
 * no more for 200–800 MB floods); a gateway that held the flood would grow by over 100 MB.
 */
const FLOOD_RSS_BUDGET_MB = 90;

function assertSynthesized(reply: StreamedReply): void {
  assert.equal(reply.status, 200);
  assert.ok(reply.finished, `no terminal event: ${reply.events.join(",")}`);
  assert.equal(reply.answer, SYNTHESIZED, reply.progress);
}

Deno.test({
  name: "child faults: every turn ends with a clear outcome, bounded memory and no process left",
  ignore: Deno.build.os === "windows",
  fn: async (t) => {
    await using scratch = await tempDir("cg-child-faults-");
    const dir = scratch.path;
    const box = await FaultBox.create(dir);
    // Each step injects a fault into the same agents: no cool-down may skip them, and a hang
    // must run to its time-out rather than be cut off by the quorum (both: council tests).
    // Each step's fault must reach children as they start, and no process may be left between
    // turns: no warm pool (its children wait between turns by design; warm_pool_test.ts).
    const gateway = await spawnGateway(dir, {
      fanOutPolicy: "always",
      councilSize: 3,
      warmPool: "off",
      quorum: { minAnswers: 0 },
      health: { failures: 0 },
      defaultAgents: [
        box.agent("steady", {
          reply: "steady: 42",
          rules: [{ match: SYNTH, reply: SYNTHESIZED }],
        }),
        box.agent("slow", { reply: "slow: 42" }),
        box.agent("quick", { reply: "quick: 42" }, { timeoutMs: QUICK_TIMEOUT_MS }),
      ],
    });

    /** Runs one turn and checks that none of the processes it started is still alive. */
    let turnNumber = 0;
    const turn = async (
      extraPids: () => Promise<number[]> = () => Promise.resolve([]),
      protocol: "messages" | "responses" = "messages",
    ) => {
      const before = (await box.pids()).length;
      const reply = await streamTurn(gateway.origin, protocol, `Fault turn ${++turnNumber}`);
      const started = (await box.pids()).slice(before);
      await assertAllGone([...started, ...await extraPids()], `turn ${turnNumber}`);
      return reply;
    };

    try {
      await t.step("a healthy turn (warm-up, baseline memory)", async () => {
        assertSynthesized(await turn());
      });
      const baselineKb = await rssKb(gateway.pid);

      await t.step("a child that crashes at start is reported and left out", async () => {
        await box.inject("slow", { modes: ["crash"], stderr: "slow CLI: boom at start" });
        const reply = await turn();
        assertSynthesized(reply);
        assert.match(reply.progress, /slow: failed after .*exit code 1: slow CLI: boom at start/);
        await box.heal("slow");
      });

      await t.step("a child that exits non-zero mid-stream is reported and left out", async () => {
        await box.inject("slow", {
          modes: ["fail-mid"],
          reply: "a long answer that will be cut off half way through",
          chunkChars: 4,
          exitCode: 3,
          stderr: "slow CLI: connection reset",
        });
        const reply = await turn();
        assertSynthesized(reply);
        assert.match(
          reply.progress,
          /slow: failed after .*exit code 3: slow CLI: connection reset/,
        );
        await box.heal("slow");
      });

      await t.step("invalid JSON lines among valid ones do not spoil the child", async () => {
        await box.inject("slow", { modes: ["invalid-json"] });
        const reply = await turn();
        assertSynthesized(reply);
        assert.match(reply.progress, /3 anonymised candidates/);
        assert.doesNotMatch(reply.progress, /slow: failed/);
        await box.heal("slow");
      });

      await t.step("a child that hangs is ended at its time-out", async () => {
        await box.inject("quick", { modes: ["hang"] });
        const reply = await turn();
        assertSynthesized(reply);
        assert.match(reply.progress, /quick: failed after .*timed out after 4s/);
        await box.heal("quick");
      });

      await t.step("a hanging child that ignores SIGTERM is SIGKILLed", async () => {
        const sigtermFile = join(dir, "sigterm.log");
        await box.inject("quick", { modes: ["hang", "ignore-sigterm"], sigtermFile });
        const reply = await turn();
        assertSynthesized(reply);
        assert.match(reply.progress, /quick: failed after .*timed out after 4s/);
        assert.match(await Deno.readTextFile(sigtermFile), /SIGTERM/, "SIGTERM came first");
        await box.heal("quick");
      });

      await t.step("grandchildren holding the child's pipes are killed with it", async () => {
        const pidFile = join(dir, "grandchildren.pids");
        await box.inject("slow", {
          modes: ["grandchildren"],
          pidFile,
          grandchildren: 3,
          grandchildStdio: "inherit",
        });
        const grandchildren = async () =>
          (await Deno.readTextFile(pidFile)).split("\n").filter(Boolean).map(Number);
        const reply = await turn(grandchildren);
        assertSynthesized(reply);
        assert.equal((await grandchildren()).length, 3);
        await box.heal("slow");
      });

      await t.step("a child flooding 100 MB leaves the gateway's memory bounded", async () => {
        await box.inject("slow", { modes: ["flood"], floodMb: 100 });
        const sampler = sampleRss(gateway.pid);
        const reply = await turn();
        const peakKb = await sampler.stop();
        assertSynthesized(reply);
        const growthMb = (peakKb - baselineKb) / 1024;
        console.log(
          `flood: gateway RSS ${(baselineKb / 1024).toFixed(1)} MB before, peak ` +
            `${(peakKb / 1024).toFixed(1)} MB during a 100 MB flood (+${growthMb.toFixed(1)} MB)`,
        );
        assert.ok(
          growthMb < FLOOD_RSS_BUDGET_MB,
          `RSS grew by ${growthMb.toFixed(1)} MB during the flood`,
        );
        await box.heal("slow");
      });

      await t.step("when every child fails: a clear failure on both protocols", async () => {
        for (const agent of ["steady", "slow", "quick"]) {
          await box.inject(agent, { modes: ["crash"], stderr: `${agent} CLI: cannot start` });
        }
        // Responses: a completed answer explaining the failure (Codex retries a failed one).
        const failed = await turn(undefined, "responses");
        assert.equal(failed.status, 200);
        assert.equal(failed.events.at(-1), "response.completed");
        for (const agent of ["steady", "slow", "quick"]) {
          assert.match(failed.answer, new RegExp(`${agent} CLI: cannot start`));
        }
        const answered = await turn();
        assert.ok(answered.finished);
        assert.equal(answered.events.at(-1), "message_stop");
        assert.match(answered.answer, /steady CLI: cannot start/);
        for (const agent of ["steady", "slow", "quick"]) await box.heal(agent);
      });

      await t.step("the gateway still serves normally afterwards", async () => {
        assertSynthesized(await turn());
      });
    } finally {
      const code = await gateway.stop();
      assert.equal(code, 0, gateway.lines().join("\n"));
    }
  },
});
