/**
 * Parallel efficiency: three children sleeping 1.0 s and a synthesizer sleeping 0.5 s. Ideal
 * wall = 1.5 s (slowest child + synthesizer); the gateway must stay within 1.05 × that.
 */
import { messagesBody, streamMessages } from "../client.ts";
import { directCouncil } from "../direct.ts";
import { councilConfig, fakeAgent, fakePath, startGateway } from "../processes.ts";
import { summarize } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";
import { failureOf } from "./turns.ts";

const CHILD_S = 1.0;
const SYNTH_S = 0.5;
const IDEAL_MS = (CHILD_S + SYNTH_S) * 1000;
const LIMIT_MS = 1.05 * IDEAL_MS;

export const parallel: Scenario = {
  name: "parallel",
  description: "3 children × 1.0 s + synthesizer 0.5 s: turn wall vs the 1.5 s ideal",
  async run(context) {
    const env = { BENCH_CHILD_SLEEP: String(CHILD_S), BENCH_SYNTH_SLEEP: String(SYNTH_S) };
    const agents = ["a", "b", "c"].map((name) => fakeAgent(context, name, "child.sh", env));
    const gateway = await startGateway(context, councilConfig(agents));
    const command = fakePath(context, "child.sh");
    const walls: number[] = [];
    const direct: number[] = [];
    const errors: string[] = [];
    try {
      const count = runs(context, 8, 3);
      for (let i = 0; i < count; i++) {
        direct.push(await directCouncil(command, env));
        const turn = await streamMessages(gateway.origin, messagesBody(`Parallel bench turn ${i}`));
        const failure = failureOf(turn);
        if (failure) errors.push(failure);
        else walls.push(turn.wallMs);
        context.log(`parallel ${i + 1}/${count}: ${turn.wallMs.toFixed(0)} ms`);
      }
    } finally {
      await gateway.stop();
    }
    const wall = summarize(walls);
    return {
      figures: [{
        scenario: "parallel",
        name: "Parallel efficiency: turn wall (3 × 1.0 s ‖ + 0.5 s synth)",
        unit: "ms",
        gateway: wall,
        baseline: { label: "same fakes spawned directly", value: summarize(direct) },
        reference: `p50 ≤ ${LIMIT_MS} ms (1.05 × 1.5 s)`,
        note: `p50 = ${(wall.p50 / IDEAL_MS).toFixed(3)} × ideal` +
          (errors.length ? `; ${errors.length} failed turns: ${errors[0]}` : ""),
      }],
      details: { idealMs: IDEAL_MS, walls, direct, errors },
    };
  },
};
