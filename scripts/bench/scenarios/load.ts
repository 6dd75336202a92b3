/**
 * Load (issue 9 §4, `--only load`): the real gateway with a council of three marker fakes of
 * known latency (tests/support/marker_turns.ts). First 50 concurrent streaming turns over both
 * protocols, then a soak of sequential turns with the gateway's RSS and open fds read at
 * checkpoints, then the process table. Its figures carry targets, so the bench fails when a
 * limit gives: a failed turn or cross-talk, RSS still growing after the soak, a leaked fd, a
 * child left running.
 */
import {
  concurrentTurns,
  crossTalk,
  fdCount,
  leftoverFakes,
  loadConfig,
  type LoadTurn,
  loadTurn,
  newMarker,
} from "../../../tests/support/marker_turns.ts";
import { type ServerProcess, startGateway } from "../processes.ts";
import { type Figure, summarize, target } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";

const CONCURRENCY = 50;
const CHILD_MS = 100;
const SYNTH_MS = 50;
/** How much the peak RSS may grow from the soak's second half to the confirming turns. */
const MAX_GROWTH_MB = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The turns that failed or heard of another turn, and the first few reasons. */
function problems(turns: LoadTurn[]): { count: number; first: string } {
  const failed = turns.filter((t) => t.error).map((t) => `${t.marker}: ${t.error}`);
  const talk = turns.filter((t) => !t.error).map(crossTalk).filter((x) => x !== undefined);
  return { count: failed.length + talk.length, first: [...failed, ...talk].slice(0, 3).join("; ") };
}

/** `count` turns one after the other on one connection (closed afterwards), RSS every tenth. */
async function sequential(
  gateway: ServerProcess,
  run: string,
  from: number,
  count: number,
  samples: number[],
): Promise<LoadTurn[]> {
  const client = Deno.createHttpClient({});
  const done: LoadTurn[] = [];
  try {
    for (let i = from; i < from + count; i++) {
      const protocol = i % 2 === 0 ? "messages" : "responses";
      done.push(await loadTurn(gateway.origin, protocol, newMarker(run, 100_000 + i), client));
      if ((i + 1) % 10 === 0) samples.push(await gateway.rssMb());
    }
  } finally {
    client.close();
  }
  return done;
}

export const load: Scenario = {
  name: "load",
  description: "50 concurrent turns, then a soak: no errors or cross-talk, RSS levels, no fd leak",
  async run(context) {
    const soakTurns = runs(context, 1000, 100);
    const confirmTurns = runs(context, 500, 50);
    const gateway = await startGateway(context, loadConfig(CHILD_MS, SYNTH_MS));
    const run = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
    const f = (name: string, unit: string, value: Figure["gateway"], extra = {}): Figure => ({
      scenario: "load",
      name: `Load: ${name}`,
      unit,
      gateway: value,
      ...extra,
    });
    /** A count that must be 0. */
    const none = (name: string, unit: string, n: number, note = "") =>
      f(name, unit, n, { target: target("0", n, 0), note: note || undefined });
    const figures: Figure[] = [];
    try {
      const warm = problems(await sequential(gateway, `${run}w`, 0, 10, []));
      if (warm.count) throw new Error(`warm-up: ${warm.first}`);
      const rssStart = await gateway.idleRssMb();
      const fdsStart = fdCount(gateway.pid);
      const burst = await concurrentTurns(gateway.origin, run, CONCURRENCY);
      const burstProblems = problems(burst);
      context.log(`load: ${CONCURRENCY} concurrent, ${burstProblems.count} failed or cross-talk`);
      // RSS after every tenth turn: GC makes it a sawtooth, so windows compare by their peaks.
      const soakSamples: number[] = [];
      const confirmSamples: number[] = [];
      const step = soakTurns / 10;
      let turns: LoadTurn[] = [];
      for (let i = 0; i < soakTurns + confirmTurns; i += step) {
        const into = i < soakTurns ? soakSamples : confirmSamples;
        turns = turns.concat(await sequential(gateway, run, i, step, into));
        context.log(`load: ${i + step} turns, RSS ${(await gateway.idleRssMb()).toFixed(1)} MB`);
      }
      const soakProblems = problems(turns);
      const soakPeak = Math.max(...soakSamples.slice(soakSamples.length / 2));
      const growth = Math.max(...confirmSamples) - soakPeak;
      const fdLeak = fdCount(gateway.pid) - fdsStart;
      const growthText = `≤ ${MAX_GROWTH_MB} MB`;
      figures.push(
        none(
          `${CONCURRENCY} concurrent turns failed or cross-talk`,
          "turns",
          burstProblems.count,
          burstProblems.first,
        ),
        f(`${CONCURRENCY} concurrent turns: wall`, "ms", summarize(burst.map((t) => t.wallMs)), {
          note: `children ${CHILD_MS} ms, synthesizer ${SYNTH_MS} ms`,
        }),
        none(
          `${turns.length} sequential turns failed or cross-talk`,
          "turns",
          soakProblems.count,
          soakProblems.first,
        ),
        f(`peak RSS growth over ${confirmTurns} turns after ${soakTurns}`, "MB", growth, {
          // A quick run is too short for RSS to level off: shown, not held to the bound.
          ...(context.quick
            ? { reference: growthText }
            : { target: target(growthText, growth, MAX_GROWTH_MB) }),
          note: `idle RSS ${rssStart.toFixed(1)} MB after warm-up; peak ${soakPeak.toFixed(1)} MB`,
        }),
        none("open fds leaked", "fds", fdLeak),
      );
    } finally {
      await gateway.stop();
    }
    // Pooled children wait while the gateway runs; once it has stopped, none may be left.
    let leftovers = await leftoverFakes();
    for (let i = 0; i < 20 && leftovers.length; i++) {
      await sleep(100);
      leftovers = await leftoverFakes();
    }
    const left = "children left running after the gateway stopped";
    figures.push(none(left, "processes", leftovers.length, leftovers.slice(0, 2).join("; ")));
    return { figures };
  },
};
