/**
 * Orchestration overhead and time to first byte, with instant fakes, one turn at a time.
 *
 * Overhead = the turn's wall time at the client minus the children's and synthesizer's own
 * wall time (spawn to exit), which the bench measures alongside by running the same fakes
 * itself: three in parallel, then the synthesizer. Time to first byte is request sent → first
 * SSE byte (message_start), against a bare Deno.serve that sends message_start at once.
 */
import { messagesBody, streamMessages } from "../client.ts";
import { directCouncil } from "../direct.ts";
import {
  councilConfig,
  fakeAgent,
  fakePath,
  startBaselineServer,
  startGateway,
} from "../processes.ts";
import { quantile, summarize } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";
import { failureOf } from "./turns.ts";

const WARM_UP = 20;

export const overhead: Scenario = {
  name: "overhead",
  description: "instant fakes: turn wall minus the children's own wall; time to first byte",
  async run(context) {
    const agents = ["a", "b", "c"].map((name) => fakeAgent(context, name, "child.sh"));
    const gateway = await startGateway(context, councilConfig(agents));
    const bare = await startBaselineServer(context);
    const command = fakePath(context, "child.sh");
    const direct: number[] = [];
    const walls: number[] = [];
    const firstBytes: number[] = [];
    const bareFirstBytes: number[] = [];
    const errors: string[] = [];
    try {
      for (let i = 0; i < WARM_UP; i++) {
        await streamMessages(gateway.origin, messagesBody(`Overhead warm-up ${i}`));
        await streamMessages(bare.origin, messagesBody("warm-up"));
        await directCouncil(command, {});
      }
      const count = runs(context, 300, 40);
      for (let i = 0; i < count; i++) {
        direct.push(await directCouncil(command, {}));
        const floor = await streamMessages(bare.origin, messagesBody(`Overhead turn ${i}`));
        bareFirstBytes.push(floor.firstByteMs);
        const turn = await streamMessages(gateway.origin, messagesBody(`Overhead turn ${i}`));
        const failure = failureOf(turn);
        if (failure) errors.push(failure);
        else {
          walls.push(turn.wallMs);
          firstBytes.push(turn.firstByteMs);
        }
        if ((i + 1) % 50 === 0) context.log(`overhead ${i + 1}/${count}`);
      }
    } finally {
      await Promise.all([gateway.stop(), bare.stop()]);
    }
    const childrenMs = quantile(direct, 0.5);
    const overheads = summarize(walls.map((w) => w - childrenMs));
    const ttfb = summarize(firstBytes);
    const errorNote = errors.length ? `; ${errors.length} failed turns, first: ${errors[0]}` : "";
    return {
      figures: [
        {
          scenario: "overhead",
          name: "Orchestration overhead (turn wall − children's own wall)",
          unit: "ms",
          gateway: overheads,
          baseline: { label: "children's own wall, subtracted", value: summarize(direct) },
          reference: "≤ 5 ms p50, ≤ 20 ms p99",
          note: `turn wall ${summarize(walls).p50.toFixed(1)} ms p50 minus the median ` +
            `${childrenMs.toFixed(1)} ms of 3 parallel instant fakes then 1 (spawned by the ` +
            `bench)${errorNote}`,
        },
        {
          scenario: "overhead",
          name: "Time to first byte (message_start)",
          unit: "ms",
          gateway: ttfb,
          baseline: { label: "bare Deno.serve", value: summarize(bareFirstBytes) },
          reference: "≤ 10 ms p50",
        },
      ],
      details: { direct, walls, firstBytes, bareFirstBytes, errors },
    };
  },
};
