/**
 * Concurrency: 50 streaming turns at once, each fanning out to 3 children of 1 s plus a 1 s
 * synthesizer (200 processes per batch). The batch must take about as long as one turn alone
 * (≤ 1.3 ×), with no errors and the gateway's peak RSS ≤ 250 MB.
 */
import { messagesBody, pool, streamMessages } from "../client.ts";
import { directCouncil } from "../direct.ts";
import {
  councilConfig,
  fakeAgent,
  fakePath,
  type ServerProcess,
  startGateway,
} from "../processes.ts";
import { quantile, summarize, target } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";
import { failureOf } from "./turns.ts";

const TURNS = 50;
const SLEEP_S = 1;

/** Samples RSS every `everyMs` until stopped; resolves to the highest reading (MB). */
function sampleRss(server: ServerProcess, everyMs: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const rss = await server.rssMb();
      if (rss > peak) peak = rss;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

export const concurrency: Scenario = {
  name: "concurrency",
  description: "50 concurrent streaming turns × 3 children (1 s fakes): wall, errors, peak RSS",
  async run(context) {
    const env = { BENCH_CHILD_SLEEP: String(SLEEP_S), BENCH_SYNTH_SLEEP: String(SLEEP_S) };
    const agents = ["a", "b", "c"].map((name) => fakeAgent(context, name, "child.sh", env));
    const gateway = await startGateway(context, councilConfig(agents));
    const single: number[] = [];
    const batches: number[] = [];
    const directBatches: number[] = [];
    const turnWalls: number[] = [];
    const errors: string[] = [];
    let peakSampled = 0;
    let peakHwm = NaN;
    try {
      await streamMessages(gateway.origin, messagesBody("Concurrency warm-up"));
      for (let i = 0; i < runs(context, 3, 2); i++) {
        const turn = await streamMessages(gateway.origin, messagesBody(`Single turn ${i}`));
        const failure = failureOf(turn);
        if (failure) errors.push(`single: ${failure}`);
        else single.push(turn.wallMs);
      }
      const count = runs(context, 3, 1);
      for (let b = 0; b < count; b++) {
        // The machine's own floor: the same 200 processes started by the bench itself.
        const directStart = performance.now();
        await pool(TURNS, TURNS, () => directCouncil(fakePath(context, "child.sh"), env));
        directBatches.push(performance.now() - directStart);
        const sampler = sampleRss(gateway, 50);
        const started = performance.now();
        const turns = await pool(
          TURNS,
          TURNS,
          (i) => streamMessages(gateway.origin, messagesBody(`Batch ${b} turn ${i}`)),
        );
        batches.push(performance.now() - started);
        peakSampled = Math.max(peakSampled, await sampler.stop());
        for (const turn of turns) {
          const failure = failureOf(turn);
          if (failure) errors.push(failure);
          else turnWalls.push(turn.wallMs);
        }
        context.log(`concurrency batch ${b + 1}/${count}: ${batches.at(-1)!.toFixed(0)} ms`);
      }
      peakHwm = await gateway.peakRssMb();
    } finally {
      await gateway.stop();
    }
    const singleP50 = quantile(single, 0.5);
    const batch = summarize(batches);
    const peak = Number.isFinite(peakHwm) ? Math.max(peakHwm, peakSampled) : peakSampled;
    const limit = 1.3 * singleP50;
    return {
      figures: [
        {
          scenario: "concurrency",
          name: `Concurrency: wall of ${TURNS} concurrent turns × 3 children (1 s fakes)`,
          unit: "ms",
          gateway: batch,
          baseline: { label: "one turn alone", value: summarize(single) },
          reference: `p50 ≤ 1.3 × one turn (${limit.toFixed(0)} ms)`,
          note: `per-turn wall in the batches ${summarize(turnWalls).p50.toFixed(0)} / ` +
            `${summarize(turnWalls).p99.toFixed(0)} ms p50/p99; the same ${TURNS} councils ` +
            `spawned directly by the bench: ${summarize(directBatches).p50.toFixed(0)} ms p50`,
        },
        {
          scenario: "concurrency",
          name: "Concurrency: failed turns",
          unit: "",
          gateway: errors.length,
          target: target("0", errors.length, 0),
          ...(errors.length ? { note: `first: ${errors[0]}` } : {}),
        },
        {
          scenario: "concurrency",
          name: "Concurrency: gateway peak RSS",
          unit: "MB",
          gateway: peak,
          reference: "≤ 250 MB",
        },
      ],
      details: { single, batches, directBatches, turnWalls, errors, peakSampled, peakHwm },
    };
  },
};
